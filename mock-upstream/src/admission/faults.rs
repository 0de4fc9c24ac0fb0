//! Faults on purpose: error statuses and mid-stream breaks at configured, seeded rates
//! (`--fault 429:2%`, `--fault chat:reset@5:1%`), or forced per request by `x-mock-*` headers;
//! each error is answered as the provider answers it (its words are `crate::admission::error_body`'s):
//! OpenAI's 429 with `retry-after`, `retry-after-ms`, `x-ratelimit-*` and `x-should-retry`;
//! Anthropic's 429 and 529 `overloaded_error`; 500 and 503 in each provider's shape.
//!
//! The same headers' `x-mock-latency`, `x-mock-ttft`, `x-mock-itl` and `x-mock-tokens` are
//! read here into [`crate::timing::latency::Changes`], which the request's draw applies.

use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};

use crate::admission::error_body;
use crate::admission::rejection::Rejection;
use crate::answer::body::MockBody;
use crate::config::{Api, FaultKind, Provider, StreamFault, CONTENT_FILTER, STATUSES};
use crate::control::Steer;
use crate::state::State;
use crate::timing::latency::Changes;

/// What a request's `x-mock-*` headers ask for.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub status: Option<u16>,
    /// A mid-stream fault (streams only).
    pub stream_fault: Option<StreamFault>,
    /// `x-mock-fault: content_filter`.
    pub content_filter: bool,
    /// `x-mock-latency`, `x-mock-ttft`, `x-mock-itl`, `x-mock-tokens`.
    pub latency: Changes,
    /// `x-mock-timestamps`: answer with the receipt and answer times.
    pub timestamps: bool,
}

impl Overrides {
    /// Reads the `x-mock-*` headers (one pass over the headers; nothing when there are none).
    pub fn from_headers(headers: &HeaderMap) -> Result<Overrides, Rejection> {
        let mut out = Overrides::default();
        for (name, value) in headers {
            let Some(key) = name.as_str().strip_prefix("x-mock-") else {
                continue;
            };
            let bad =
                || Rejection::bad_request(format!("Invalid {name} header: {value:?}."), None, None);
            let text = value.to_str().map_err(|_| bad())?;
            if out.latency.read_header(key, text).map_err(|_| bad())? {
                continue;
            }
            match key {
                "status" => {
                    let status: u16 = text.trim().parse().map_err(|_| bad())?;
                    if !STATUSES.contains(&status) {
                        return Err(bad());
                    }
                    out.status = Some(status);
                }
                "fault" if text.trim() == CONTENT_FILTER => out.content_filter = true,
                "fault" => out.stream_fault = Some(text.parse().map_err(|_| bad())?),
                "timestamps" => out.timestamps = true,
                _ => {}
            }
        }
        Ok(out)
    }
}

/// A fault that leaves an answer to send, flawed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    /// The stream breaks mid-way.
    Stream(StreamFault),
    /// The answer ends as the provider's content filter ends it.
    ContentFilter,
}

/// The fault request `ordinal` on `api` gets, forced by its headers or drawn from the
/// configured rates (or those of the steered state in force, `steer`): `Err` with the error
/// answer (counted), or the flaw its answer is to have (`None` for a normal answer).
pub fn check(
    state: &State,
    overrides: &Overrides,
    steer: Option<&Steer>,
    ordinal: u64,
    provider: Provider,
    api: Api,
    streaming: bool,
) -> Result<Option<Flaw>, Box<Response<MockBody>>> {
    let forced = match (overrides.status, overrides.stream_fault) {
        (Some(status), _) => Some(FaultKind::Status(status)),
        (None, Some(fault)) if streaming => Some(FaultKind::Stream(fault)),
        _ if overrides.content_filter => Some(FaultKind::ContentFilter),
        _ => None,
    };
    let seed = state.config.seed;
    let rates = steer
        .and_then(|s| s.faults.as_ref())
        .unwrap_or(&state.config.faults);
    match forced.or_else(|| rates.pick(seed, ordinal, api, streaming)) {
        Some(FaultKind::Status(status)) => {
            state.metrics.fault(status);
            Err(Box::new(response(status, provider)))
        }
        Some(FaultKind::Stream(fault)) => Ok(Some(Flaw::Stream(fault))),
        Some(FaultKind::ContentFilter) => Ok(Some(Flaw::ContentFilter)),
        None => Ok(None),
    }
}

/// The response to a fault of `status`, as `provider` sends it.
pub fn response(status: u16, provider: Provider) -> Response<MockBody> {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let retryable = status == 408 || status == 409 || status == 429 || status >= 500;
    let rejection = Rejection::in_words(code, error_body::fault(provider, code));
    let mut response = rejection.into_response();
    let headers = response.headers_mut();
    let mut set = |name: &'static str, value: &'static str| {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    };
    set("x-should-retry", if retryable { "true" } else { "false" });
    if status == 429 {
        set("retry-after", "1");
        match provider {
            Provider::OpenAi | Provider::Azure => {
                set("retry-after-ms", "1000");
                set("x-ratelimit-limit-requests", "10000");
                set("x-ratelimit-remaining-requests", "0");
                set("x-ratelimit-reset-requests", "1s");
                set("x-ratelimit-limit-tokens", "30000000");
                set("x-ratelimit-remaining-tokens", "0");
                set("x-ratelimit-reset-tokens", "1s");
            }
            Provider::Anthropic => {
                set("anthropic-ratelimit-requests-limit", "4000");
                set("anthropic-ratelimit-requests-remaining", "0");
                headers.insert(
                    HeaderName::from_static("anthropic-ratelimit-requests-reset"),
                    crate::catalog::next_second(),
                );
            }
            // Google and AWS send no rate-limit headers.
            Provider::Gemini | Provider::Bedrock => {}
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_override_one_request() {
        let mut headers = HeaderMap::new();
        headers.insert("x-mock-status", HeaderValue::from_static("503"));
        headers.insert("x-mock-tokens", HeaderValue::from_static("4"));
        headers.insert("x-mock-ttft", HeaderValue::from_static("20ms"));
        let o = Overrides::from_headers(&headers).unwrap();
        assert_eq!(o.status, Some(503));
        assert_eq!(
            o.latency.tokens,
            Some(gatebench_shared::TokenCount::Fixed(4))
        );
        assert_eq!(o.latency.ttft, Some("20ms".parse().unwrap()));
        headers.insert("x-mock-status", HeaderValue::from_static("200"));
        assert!(Overrides::from_headers(&headers).is_err());
    }
}
