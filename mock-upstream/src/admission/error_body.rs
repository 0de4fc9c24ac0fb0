//! Every provider's error body, in one place: the shape of each (OpenAI's
//! `{"error":{"message","type","param","code"}}`, Anthropic's `{"type":"error","error":{"type",
//! "message"}}`, Azure OpenAI's `{"error":{"code","message"}}`, Google's `{"error":{"code",
//! "message","status"}}`, AWS's `{"message"}` with `x-amzn-ErrorType`) with the headers it comes
//! with, and each provider's words for the faults the mock injects and the rate limits it
//! enforces.
//!
//! Plain data: `rejection` turns an error into a response in its shape; `faults` and the
//! pipeline's rate-limit answer (`inbound`) take their words from here.

use gatebench_shared::wire::anthropic::ErrorBody as AnthropicError;
use gatebench_shared::wire::openai::ErrorBody;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::StatusCode;

use crate::catalog::{ANTHROPIC_REQUEST_ID, PROCESSING_MS, REQUEST_ID};
use crate::config::Provider;
use crate::ratelimit::{openai_duration, Exceeded, Which};

/// Whose error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    OpenAi,
    Anthropic,
    /// Azure OpenAI's own, for the errors Azure answers itself (keys, versions, faults); the
    /// model's own errors keep OpenAI's.
    Azure,
    Gemini,
    Bedrock,
}

impl Shape {
    /// The body of an error of `status` in this shape. Anthropic's carries `kind`; OpenAI's
    /// `kind`, `param` and `code`; Azure's `code` (`"500"` when none); Google's the status;
    /// AWS's the message only.
    pub fn body(
        self,
        status: StatusCode,
        kind: &str,
        message: &str,
        param: Option<&str>,
        code: Option<&str>,
    ) -> Vec<u8> {
        match self {
            Shape::Anthropic => AnthropicError::encode(kind, message),
            Shape::OpenAi => ErrorBody::encode(message, kind, param, code),
            Shape::Azure => {
                let code = code.unwrap_or("500");
                let body = serde_json::json!({"error": {"code": code, "message": message}});
                body.to_string().into_bytes()
            }
            Shape::Gemini => {
                gatebench_shared::wire::gemini::ErrorBody::encode(status.as_u16(), message)
            }
            Shape::Bedrock => serde_json::json!({ "message": message })
                .to_string()
                .into_bytes(),
        }
    }

    /// Puts the headers this shape's errors carry besides `content-type` on `headers`: the
    /// provider's request id, and AWS's error type.
    pub fn insert_headers(self, status: StatusCode, headers: &mut HeaderMap) {
        match self {
            Shape::Anthropic => {
                headers.insert("request-id", HeaderValue::from_static(ANTHROPIC_REQUEST_ID));
            }
            Shape::OpenAi => {
                headers.insert("x-request-id", HeaderValue::from_static(REQUEST_ID));
                headers.insert(PROCESSING_MS, HeaderValue::from_static("0"));
            }
            Shape::Azure => {
                headers.insert("apim-request-id", HeaderValue::from_static(REQUEST_ID));
            }
            Shape::Gemini => {}
            Shape::Bedrock => {
                let kind = gatebench_shared::wire::bedrock::error_type(status.as_u16());
                let value = format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/");
                if let Ok(value) = HeaderValue::try_from(value) {
                    headers.insert("x-amzn-errortype", value);
                }
                headers.insert("x-amzn-requestid", HeaderValue::from_static(REQUEST_ID));
            }
        }
    }
}

/// Anthropic's error type for a status.
pub fn anthropic_kind(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        408 => "timeout_error",
        429 => "rate_limit_error",
        500 => "api_error",
        503 | 529 => "overloaded_error",
        _ => "invalid_request_error",
    }
}

/// What a provider's error says, in its shape; the status is the caller's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    pub shape: Shape,
    pub message: String,
    /// OpenAI's `type`, Anthropic's error type; empty for the shapes that have none.
    pub kind: &'static str,
    pub code: Option<&'static str>,
}

impl Words {
    /// Azure OpenAI's error: a string `code` and a `message`, no `type`.
    pub fn azure(code: &'static str, message: impl Into<String>) -> Words {
        Words {
            shape: Shape::Azure,
            message: message.into(),
            kind: "",
            code: Some(code),
        }
    }

    /// An error with only a message (Google's and AWS's shapes; Anthropic's takes its type
    /// from `status`).
    fn plain(shape: Shape, status: StatusCode, message: impl Into<String>) -> Words {
        let kind = match shape {
            Shape::Anthropic => anthropic_kind(status),
            Shape::OpenAi | Shape::Azure | Shape::Gemini | Shape::Bedrock => "",
        };
        Words {
            shape,
            message: message.into(),
            kind,
            code: None,
        }
    }

    fn openai(message: impl Into<String>, kind: &'static str, code: Option<&'static str>) -> Words {
        Words {
            shape: Shape::OpenAi,
            message: message.into(),
            kind,
            code,
        }
    }
}

/// The message of a fault no provider has its own words for.
const FORCED: &str = "The request was rejected (forced by the mock).";

/// What `provider` answers a fault of `status` with (`--fault`, `x-mock-status`).
pub fn fault(provider: Provider, status: StatusCode) -> Words {
    let s = status.as_u16();
    match provider {
        Provider::OpenAi => openai_fault(s),
        Provider::Azure => azure_fault(s),
        Provider::Gemini => Words::plain(Shape::Gemini, status, gemini_fault(s)),
        Provider::Bedrock => Words::plain(Shape::Bedrock, status, bedrock_fault(s)),
        Provider::Anthropic => Words::plain(Shape::Anthropic, status, anthropic_fault(s)),
    }
}

/// OpenAI's words for a fault of status `s`.
fn openai_fault(s: u16) -> Words {
    let (message, kind, code) = match s {
        429 => (
            "Rate limit reached for requests per min (RPM): Limit 10000, Used 10000, \
             Requested 1. Please try again in 1s.",
            "requests",
            Some("rate_limit_exceeded"),
        ),
        500 => (
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
        ),
        503 => (
            "The engine is currently overloaded, please try again later.",
            "server_error",
            None,
        ),
        s if s >= 500 => (
            "The server had an error processing your request.",
            "server_error",
            None,
        ),
        _ => (FORCED, "invalid_request_error", None),
    };
    Words::openai(message, kind, code)
}

/// Azure OpenAI's words for a fault of status `s`.
fn azure_fault(s: u16) -> Words {
    let message = match s {
        429 => {
            "Requests to the ChatCompletions_Create Operation under Azure OpenAI API \
             version 2024-10-21 have exceeded token rate limit of your current OpenAI \
             S0 pricing tier. Please retry after 1 second. Please go here: \
             https://aka.ms/oai/quotaincrease if you would like to further increase the \
             default rate limit."
        }
        500 => "The server had an error while processing your request. Sorry about that!",
        503 => {
            "The service is temporarily unable to process your request. Please try \
             again later."
        }
        s if s >= 500 => "The server had an error processing your request.",
        _ => FORCED,
    };
    let code = match s {
        429 => "429",
        500 => "InternalServerError",
        503 => "ServiceUnavailable",
        _ => "BadRequest",
    };
    Words::azure(code, message)
}

/// Gemini's message for a fault of status `s`.
fn gemini_fault(s: u16) -> &'static str {
    match s {
        429 => "Resource has been exhausted (e.g. check quota).",
        500 => {
            "An internal error has occurred. Please retry or report in \
             https://developers.generativeai.google/guide/troubleshooting"
        }
        503 => "The model is overloaded. Please try again later.",
        s if s >= 500 => "The server had an error processing your request.",
        _ => FORCED,
    }
}

/// Bedrock's message for a fault of status `s`.
fn bedrock_fault(s: u16) -> &'static str {
    match s {
        429 => "Too many requests, please wait before trying again.",
        503 => "Bedrock is unable to process your request.",
        s if s >= 500 => {
            "The system encountered an unexpected error during processing. Try your \
             request again."
        }
        _ => FORCED,
    }
}

/// Anthropic's message for a fault of status `s`.
fn anthropic_fault(s: u16) -> &'static str {
    match s {
        429 => "Number of requests has exceeded your per-minute rate limit.",
        529 => "Overloaded",
        500 => "Internal server error",
        s if s >= 500 => "The server had an error processing your request.",
        _ => FORCED,
    }
}

/// What `provider` answers (with a 429) a request over `--rate-limit` with. Azure's limits
/// answer in OpenAI's shape, as they always have here.
pub fn rate_limited(provider: Provider, exceeded: &Exceeded) -> Words {
    let status = StatusCode::TOO_MANY_REQUESTS;
    match *exceeded {
        Exceeded::Rate {
            which,
            limit,
            requested,
            wait,
        } => match provider {
            Provider::OpenAi | Provider::Azure => {
                let (what, short, kind) = match which {
                    Which::Requests => ("requests", "RPM", "requests"),
                    Which::Tokens => ("tokens", "TPM", "tokens"),
                };
                let message = format!(
                    "Rate limit reached for {what} per min ({short}): Limit {limit}, \
                     Requested {requested}. Please try again in {}.",
                    openai_duration(wait)
                );
                Words::openai(message, kind, Some("rate_limit_exceeded"))
            }
            Provider::Anthropic => {
                let what = match which {
                    Which::Requests => "requests",
                    Which::Tokens => "tokens",
                };
                let message = format!("Number of {what} has exceeded your per-minute rate limit.");
                Words::plain(Shape::Anthropic, status, message)
            }
            Provider::Gemini => Words::plain(
                Shape::Gemini,
                status,
                "Resource has been exhausted (e.g. check quota).",
            ),
            Provider::Bedrock => Words::plain(
                Shape::Bedrock,
                status,
                "Too many requests, please wait before trying again.",
            ),
        },
        Exceeded::TooLarge { tokens, capacity } => {
            let message = format!(
                "Request too large: Limit {capacity} tokens per min, Requested {tokens}. The \
                 input or output tokens must be reduced in order to run successfully."
            );
            match provider {
                Provider::OpenAi | Provider::Azure => {
                    Words::openai(message, "tokens", Some("rate_limit_exceeded"))
                }
                Provider::Anthropic => Words::plain(Shape::Anthropic, status, message),
                Provider::Gemini => Words::plain(Shape::Gemini, status, message),
                Provider::Bedrock => Words::plain(Shape::Bedrock, status, message),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_encodes_its_own_body() {
        let status = StatusCode::TOO_MANY_REQUESTS;
        let body = |shape: Shape| {
            let bytes = shape.body(status, "k", "m", Some("p"), Some("c"));
            String::from_utf8(bytes).unwrap()
        };
        assert!(body(Shape::OpenAi).contains(r#""param":"p""#));
        assert!(body(Shape::Anthropic).starts_with(r#"{"type":"error""#));
        assert_eq!(
            body(Shape::Azure),
            r#"{"error":{"code":"c","message":"m"}}"#
        );
        assert!(body(Shape::Gemini).contains("429"));
        assert_eq!(body(Shape::Bedrock), r#"{"message":"m"}"#);
        let mut headers = HeaderMap::new();
        Shape::Bedrock.insert_headers(status, &mut headers);
        assert!(headers.contains_key("x-amzn-errortype"));
    }

    #[test]
    fn a_fault_speaks_its_provider() {
        let overloaded = StatusCode::from_u16(529).unwrap();
        let words = fault(Provider::Anthropic, overloaded);
        assert_eq!(
            (words.kind, words.message.as_str()),
            ("overloaded_error", "Overloaded")
        );
        let words = fault(Provider::Azure, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            (words.shape, words.code),
            (Shape::Azure, Some("ServiceUnavailable"))
        );
        let words = fault(Provider::OpenAi, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(words.code, Some("rate_limit_exceeded"));
    }
}
