//! An error the mock answers with, and its response in the provider's shape (the shapes are
//! `crate::admission::error_body`'s): OpenAI's by default, the other providers' on their routes.
//!
//! These are the answers to what a user can get wrong, and to faults and rate limits; they
//! allocate, which is fine off the hot path.

use hyper::header::{HeaderMap, HeaderValue, ALLOW, CONNECTION, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use crate::admission::error_body::{anthropic_kind, Shape, Words};
use crate::answer::body::MockBody;

/// An error the mock answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub status: StatusCode,
    pub message: String,
    pub kind: &'static str,
    /// The parameter at fault: a name the route knows, or a path read from the body.
    /// (Owned, as a `Box<str>`: an error is rare, and this keeps it as small as a `&str`.)
    pub param: Option<Box<str>>,
    pub code: Option<&'static str>,
    allow: Option<&'static str>,
    close: bool,
    shape: Shape,
    /// Headers the answer carries besides the usual ones (rate-limit state, retry hints).
    /// Boxed: most errors have none, and the error type stays small.
    pub extra_headers: Option<Box<HeaderMap>>,
}

impl Rejection {
    /// A 400 `invalid_request_error`.
    pub fn bad_request(
        message: impl Into<String>,
        param: Option<&'static str>,
        code: Option<&'static str>,
    ) -> Rejection {
        Rejection {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: param.map(Box::from),
            code,
            allow: None,
            close: false,
            shape: Shape::OpenAi,
            extra_headers: None,
        }
    }

    /// An error of any status, with OpenAI's `type` and `code`.
    pub fn with_status(
        status: StatusCode,
        message: impl Into<String>,
        kind: &'static str,
        code: Option<&'static str>,
    ) -> Rejection {
        Rejection {
            status,
            kind,
            code,
            ..Rejection::bad_request(message, None, None)
        }
    }

    /// Sets a header of the answer.
    pub fn set_header(&mut self, name: &'static str, value: &str) {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.extra_headers
                .get_or_insert_with(Box::default)
                .insert(name, value);
        }
    }

    /// A header the answer will carry besides the usual ones.
    #[cfg(test)]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.extra_headers
            .as_ref()?
            .get(name)
            .and_then(|v| v.to_str().ok())
    }

    /// The 409 of `GET /v1/gatebench/record` on a mock started without `--record`.
    pub fn recording_off() -> Rejection {
        Rejection::with_status(
            StatusCode::CONFLICT,
            "The mock records no arrivals: start the mock with --record N to keep the last N.",
            "invalid_request_error",
            Some("recording_off"),
        )
    }

    /// The 409 the main listener answers the control routes with.
    pub fn control_elsewhere() -> Rejection {
        Rejection::with_status(
            StatusCode::CONFLICT,
            "The control routes are served on the control listener only: start the mock with \
             --control 127.0.0.1:PORT and send them there.",
            "invalid_request_error",
            Some("control_off"),
        )
    }

    /// A 400 naming the parameter `param` (read from a query or a body).
    pub fn bad_param(message: impl Into<String>, param: &str) -> Rejection {
        let mut rejection = Rejection::bad_request(message, None, None);
        rejection.param = Some(param.into());
        rejection
    }

    /// A provider's own error (a fault's, a rate limit's) in its shape.
    pub fn in_words(status: StatusCode, words: Words) -> Rejection {
        Rejection {
            status,
            kind: words.kind,
            code: words.code,
            shape: words.shape,
            ..Rejection::bad_request(words.message, None, None)
        }
    }

    /// The same error in Anthropic's shape, with Anthropic's error type for its status.
    pub fn anthropic(self) -> Rejection {
        Rejection {
            kind: anthropic_kind(self.status),
            shape: Shape::Anthropic,
            ..self
        }
    }

    /// The same error in Google's shape (`{"error":{"code","message","status"}}`), as the
    /// Gemini API answers every error.
    pub fn gemini(self) -> Rejection {
        Rejection {
            shape: Shape::Gemini,
            ..self
        }
    }

    /// The same error in AWS's shape: `{"message"}` with the error's type in
    /// `x-amzn-ErrorType`, where boto3 and the other AWS SDKs read it.
    pub fn bedrock(self) -> Rejection {
        Rejection {
            shape: Shape::Bedrock,
            ..self
        }
    }

    /// The body was not JSON at all (OpenAI's own wording).
    pub fn not_json() -> Rejection {
        Rejection::bad_request(
            "We could not parse the JSON body of your request. (HINT: This likely means you \
             aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, \
             but what was sent was not valid JSON.)",
            None,
            None,
        )
    }

    /// 404 for a path the mock does not serve.
    pub fn not_found(method: &str, path: &str) -> Rejection {
        Rejection {
            status: StatusCode::NOT_FOUND,
            message: format!("Invalid URL ({method} {path})"),
            code: None,
            ..Rejection::bad_request("", None, None)
        }
    }

    /// 404 for an unknown model in `GET /v1/models/{id}`.
    pub fn model_not_found(model: &str) -> Rejection {
        Rejection {
            status: StatusCode::NOT_FOUND,
            message: format!("The model '{model}' does not exist"),
            code: Some("model_not_found"),
            param: Some("model".into()),
            ..Rejection::bad_request("", None, None)
        }
    }

    /// 405 with the method the path takes.
    pub fn method_not_allowed(method: &str, path: &str, allow: &'static str) -> Rejection {
        Rejection {
            status: StatusCode::METHOD_NOT_ALLOWED,
            message: format!("Method {method} is not allowed for {path}; use {allow}."),
            code: Some("method_not_allowed"),
            allow: Some(allow),
            ..Rejection::bad_request("", None, None)
        }
    }

    /// 413 for a body over the limit. The connection closes: the rest of the body is unread.
    pub fn too_large(limit: u64) -> Rejection {
        Rejection {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!("Request body too large: the limit is {limit} bytes."),
            code: Some("request_too_large"),
            close: true,
            ..Rejection::bad_request("", None, None)
        }
    }

    /// 503 for a connection past `--max-connections`; the connection closes after it.
    pub fn over_capacity(cap: usize) -> Rejection {
        let mut rejection = Rejection {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: format!(
                "The server is at capacity ({cap} connections, --max-connections); retry later."
            ),
            kind: "server_error",
            code: Some("server_overloaded"),
            close: true,
            ..Rejection::bad_request("", None, None)
        };
        rejection.set_header("retry-after", "1");
        rejection
    }

    /// 408 for a body that did not arrive in time (`--body-timeout`); the connection closes,
    /// since where the next request would begin is unknown.
    pub fn body_timed_out(timeout: std::time::Duration) -> Rejection {
        Rejection {
            status: StatusCode::REQUEST_TIMEOUT,
            message: format!(
                "Timed out reading the request body: it did not arrive within {} ms.",
                timeout.as_millis()
            ),
            code: Some("request_timeout"),
            close: true,
            ..Rejection::bad_request("", None, None)
        }
    }

    /// The response for this error.
    pub fn into_response(self) -> Response<MockBody> {
        let body = self.shape.body(
            self.status,
            self.kind,
            &self.message,
            self.param.as_deref(),
            self.code,
        );
        let mut response = Response::new(MockBody::owned(body));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.shape.insert_headers(self.status, headers);
        if let Some(allow) = self.allow {
            headers.insert(ALLOW, HeaderValue::from_static(allow));
        }
        if self.close {
            headers.insert(CONNECTION, HeaderValue::from_static("close"));
        }
        for (name, value) in self.extra_headers.map(|h| *h).unwrap_or_default() {
            if let Some(name) = name {
                headers.insert(name, value);
            }
        }
        response
    }
}
