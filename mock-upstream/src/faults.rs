//! Faults on purpose: error statuses at configured, seeded rates (`--fault 429:2%`), or forced
//! per request by `x-mock-*` headers, each answered as the provider answers it: OpenAI's 429
//! with `retry-after`, `retry-after-ms`, `x-ratelimit-*` and `x-should-retry`; Anthropic's 429
//! and 529 `overloaded_error`; 500 and 503 in each provider's shape.
//!
//! The same headers override the latency model for one request: `x-mock-latency`,
//! `x-mock-ttft`, `x-mock-itl` (distributions, like the flags) and `x-mock-tokens`.

use gatebench_shared::latency::fault_uniform;
use gatebench_shared::{Distribution, LatencyModel, TokenCount};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};

use crate::body::MockBody;
use crate::rejection::Rejection;
use crate::state::State;

/// Statuses a fault may take.
const STATUSES: std::ops::RangeInclusive<u16> = 400..=599;

/// Configured fault rates: each status with the share of requests that get it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultRates {
    entries: Vec<(u16, f64)>,
}

/// A `--fault` setting the mock cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --fault '{0}': expected STATUS:RATE like 429:2% or 503:0.5%, a status from 400 to 599, rates adding up to at most 100%")]
pub struct FaultError(pub String);

impl FaultRates {
    /// Parses `STATUS:RATE` settings (`429:2%`, `500:0.01`).
    pub fn parse(settings: &[String]) -> Result<FaultRates, FaultError> {
        let mut entries = Vec::new();
        for text in settings {
            let err = || FaultError(text.clone());
            let (status, rate) = text.split_once(':').ok_or_else(err)?;
            let status: u16 = status.trim().parse().map_err(|_| err())?;
            let rate = rate.trim();
            let rate = match rate.strip_suffix('%') {
                Some(percent) => percent.trim().parse::<f64>().map_err(|_| err())? / 100.0,
                None => rate.parse::<f64>().map_err(|_| err())?,
            };
            if !STATUSES.contains(&status) || !(0.0..=1.0).contains(&rate) {
                return Err(err());
            }
            entries.push((status, rate));
        }
        if entries.iter().map(|e| e.1).sum::<f64>() > 1.0 + 1e-9 {
            return Err(FaultError(settings.join(",")));
        }
        Ok(FaultRates { entries })
    }

    /// The settings as written back (`429:2%`).
    pub fn to_settings(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|(status, rate)| format!("{status}:{}%", rate * 100.0))
            .collect()
    }

    /// The status request `ordinal` gets, if any: a pure function of the seed and ordinal.
    pub fn pick(&self, seed: u64, ordinal: u64) -> Option<u16> {
        if self.entries.is_empty() {
            return None;
        }
        let u = fault_uniform(seed, ordinal);
        let mut edge = 0.0;
        for &(status, rate) in &self.entries {
            edge += rate;
            if u < edge {
                return Some(status);
            }
        }
        None
    }
}

/// A fault in the middle of a stream, at event `at` (`x-mock-fault: KIND@K`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamFault {
    pub kind: StreamFaultKind,
    pub at: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFaultKind {
    /// The provider's own in-stream error event, then the end of the body.
    Error,
    /// The body ends cleanly, without the stream's end marker.
    Close,
    /// Half of event K, then the end of the body.
    Truncate,
    /// Nothing more is sent; the connection stays open.
    Stall,
}

impl std::str::FromStr for StreamFault {
    type Err = ();

    fn from_str(text: &str) -> Result<StreamFault, ()> {
        let (kind, at) = text.trim().split_once('@').ok_or(())?;
        let kind = match kind {
            "error" => StreamFaultKind::Error,
            "close" => StreamFaultKind::Close,
            "truncate" => StreamFaultKind::Truncate,
            "stall" => StreamFaultKind::Stall,
            _ => return Err(()),
        };
        Ok(StreamFault {
            kind,
            at: at.parse().map_err(|_| ())?,
        })
    }
}

/// What a request's `x-mock-*` headers ask for.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub status: Option<u16>,
    /// A mid-stream fault (streams only).
    pub stream_fault: Option<StreamFault>,
    latency: Option<Distribution>,
    ttft: Option<Distribution>,
    itl: Option<Distribution>,
    tokens: Option<TokenCount>,
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
            match key {
                "status" => {
                    let status: u16 = text.trim().parse().map_err(|_| bad())?;
                    if !STATUSES.contains(&status) {
                        return Err(bad());
                    }
                    out.status = Some(status);
                }
                "latency" => out.latency = Some(text.parse().map_err(|_| bad())?),
                "ttft" => out.ttft = Some(text.parse().map_err(|_| bad())?),
                "itl" => out.itl = Some(text.parse().map_err(|_| bad())?),
                "tokens" => out.tokens = Some(text.parse().map_err(|_| bad())?),
                "fault" => out.stream_fault = Some(text.parse().map_err(|_| bad())?),
                _ => {}
            }
        }
        Ok(out)
    }

    /// True when a header changes the latency model.
    pub fn changes_latency(&self) -> bool {
        self.latency.is_some() || self.ttft.is_some() || self.itl.is_some() || self.tokens.is_some()
    }

    /// `model` with this request's overrides.
    pub fn apply(&self, model: &LatencyModel) -> LatencyModel {
        LatencyModel {
            latency: self.latency.or(model.latency),
            ttft: self.ttft.unwrap_or(model.ttft),
            itl: self.itl.unwrap_or(model.itl),
            tokens: self.tokens.unwrap_or(model.tokens),
            seed: model.seed,
        }
    }
}

/// The fault request `ordinal` gets, forced by its headers or drawn from the configured rates,
/// answered and counted; `None` for a normal answer.
pub fn check(
    state: &State,
    overrides: &Overrides,
    ordinal: u64,
    provider: Provider,
) -> Option<Response<MockBody>> {
    let status = overrides
        .status
        .or_else(|| state.config.faults.pick(state.config.latency.seed, ordinal))?;
    state.metrics.fault(status);
    Some(response(status, provider))
}

/// The latency model of one request: the configured one, with its headers' overrides.
pub fn latency(state: &State, overrides: &Overrides) -> LatencyModel {
    if overrides.changes_latency() {
        overrides.apply(&state.config.latency)
    } else {
        state.config.latency
    }
}

/// The provider whose shape a fault takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
}

/// The response to a fault of `status`, as `provider` sends it.
pub fn response(status: u16, provider: Provider) -> Response<MockBody> {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let retryable = status == 408 || status == 409 || status == 429 || status >= 500;
    let rejection = match provider {
        Provider::OpenAi => openai(code),
        Provider::Anthropic => anthropic(code),
    };
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
            Provider::OpenAi => {
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
                set("anthropic-ratelimit-requests-reset", "2026-01-01T00:00:01Z");
            }
        }
    }
    response
}

fn openai(code: StatusCode) -> Rejection {
    let (message, kind, error_code) = match code.as_u16() {
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
        _ => (
            "The request was rejected (forced by the mock).",
            "invalid_request_error",
            None,
        ),
    };
    Rejection::with_status(code, message, kind, error_code)
}

fn anthropic(code: StatusCode) -> Rejection {
    let message = match code.as_u16() {
        429 => "Number of requests has exceeded your per-minute rate limit.",
        529 => "Overloaded",
        500 => "Internal server error",
        s if s >= 500 => "The server had an error processing your request.",
        _ => "The request was rejected (forced by the mock).",
    };
    Rejection::with_status(code, message, "invalid_request_error", None).anthropic()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_are_drawn_at_their_share() {
        let rates = FaultRates::parse(&["429:2%".into(), "500:0.01".into()]).unwrap();
        assert_eq!(rates.to_settings(), ["429:2%", "500:1%"]);
        let mut counts = [0u32; 2];
        for ordinal in 0..100_000 {
            match rates.pick(7, ordinal) {
                Some(429) => counts[0] += 1,
                Some(500) => counts[1] += 1,
                None => {}
                other => panic!("{other:?}"),
            }
        }
        assert!((1_800..2_200).contains(&counts[0]), "{counts:?}");
        assert!((850..1_150).contains(&counts[1]), "{counts:?}");
        // The same seed and ordinal always give the same answer.
        assert_eq!(rates.pick(7, 41), rates.pick(7, 41));
    }

    #[test]
    fn bad_rates_are_refused() {
        for bad in ["429", "200:1%", "429:150%", "x:1%", "429:-1%"] {
            assert!(FaultRates::parse(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(FaultRates::parse(&["429:60%".into(), "500:50%".into()]).is_err());
        assert_eq!(FaultRates::parse(&[]).unwrap().pick(0, 0), None);
    }

    #[test]
    fn headers_override_one_request() {
        let mut headers = HeaderMap::new();
        headers.insert("x-mock-status", HeaderValue::from_static("503"));
        headers.insert("x-mock-tokens", HeaderValue::from_static("4"));
        headers.insert("x-mock-ttft", HeaderValue::from_static("20ms"));
        let o = Overrides::from_headers(&headers).unwrap();
        assert_eq!(o.status, Some(503));
        assert!(o.changes_latency());
        let model = o.apply(&LatencyModel::default());
        assert_eq!(model.tokens, TokenCount::Fixed(4));
        assert_eq!(model.ttft, Distribution::Fixed { us: 20_000 });
        headers.insert("x-mock-status", HeaderValue::from_static("200"));
        assert!(Overrides::from_headers(&headers).is_err());
    }
}
