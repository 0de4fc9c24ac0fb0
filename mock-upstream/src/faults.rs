//! Faults on purpose: error statuses and mid-stream breaks at configured, seeded rates
//! (`--fault 429:2%`, `--fault chat:reset@5:1%`), or forced per request by `x-mock-*` headers;
//! each error is answered as the provider answers it: OpenAI's 429
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

/// The API route a request is for; a `--fault` may apply to one only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Chat,
    Messages,
    Responses,
    Embeddings,
    Completions,
}

impl Api {
    const ALL: [Api; 5] = [
        Api::Chat,
        Api::Messages,
        Api::Responses,
        Api::Embeddings,
        Api::Completions,
    ];

    /// The name a `--fault` setting uses.
    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Messages => "messages",
            Api::Responses => "responses",
            Api::Embeddings => "embeddings",
            Api::Completions => "completions",
        }
    }

    fn parse(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|api| api.name() == name)
    }
}

/// What a configured fault does: answer an error status, or break a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Status(u16),
    /// Streams only; a request that does not stream is unaffected.
    Stream(StreamFault),
}

/// One `--fault` setting.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FaultRate {
    api: Option<Api>,
    kind: FaultKind,
    rate: f64,
}

impl FaultRate {
    fn applies(&self, api: Api, streaming: bool) -> bool {
        self.api.is_none_or(|a| a == api)
            && (streaming || matches!(self.kind, FaultKind::Status(_)))
    }
}

/// Configured fault rates: each fault with the share of requests that get it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultRates {
    entries: Vec<FaultRate>,
}

/// A `--fault` setting the mock cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --fault '{0}': expected [ROUTE:]FAULT:RATE like 429:2%, messages:529:1% or chat:reset@5:0.5%, where FAULT is a status from 400 to 599 or a mid-stream fault (error, close, truncate, stall, reset)@EVENT, ROUTE one of chat, messages, responses, embeddings, completions, and the rates of one route add up to at most 100%")]
pub struct FaultError(pub String);

impl FaultRates {
    /// Parses `[ROUTE:]FAULT:RATE` settings (`429:2%`, `messages:529:0.01`, `reset@3:1%`).
    pub fn parse(settings: &[String]) -> Result<FaultRates, FaultError> {
        let mut entries = Vec::new();
        for text in settings {
            let err = || FaultError(text.clone());
            let (head, rate) = text.rsplit_once(':').ok_or_else(err)?;
            let (api, kind) = match head.split_once(':') {
                Some((api, kind)) => (Some(Api::parse(api.trim()).ok_or_else(err)?), kind),
                None => (None, head),
            };
            let kind = kind.trim();
            let kind = if kind.contains('@') {
                FaultKind::Stream(kind.parse().map_err(|_| err())?)
            } else {
                let status: u16 = kind.parse().map_err(|_| err())?;
                if !STATUSES.contains(&status) {
                    return Err(err());
                }
                FaultKind::Status(status)
            };
            let rate = rate.trim();
            let rate = match rate.strip_suffix('%') {
                Some(percent) => percent.trim().parse::<f64>().map_err(|_| err())? / 100.0,
                None => rate.parse::<f64>().map_err(|_| err())?,
            };
            if !(0.0..=1.0).contains(&rate) {
                return Err(err());
            }
            entries.push(FaultRate { api, kind, rate });
        }
        for api in Api::ALL {
            let total: f64 = entries
                .iter()
                .filter(|e| e.applies(api, true))
                .map(|e| e.rate)
                .sum();
            if total > 1.0 + 1e-9 {
                return Err(FaultError(settings.join(",")));
            }
        }
        Ok(FaultRates { entries })
    }

    /// The settings as written back (`429:2%`, `chat:reset@5:1%`).
    pub fn to_settings(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| {
                let kind = match e.kind {
                    FaultKind::Status(status) => status.to_string(),
                    FaultKind::Stream(fault) => fault.to_string(),
                };
                let rate = e.rate * 100.0;
                match e.api {
                    Some(api) => format!("{}:{kind}:{rate}%", api.name()),
                    None => format!("{kind}:{rate}%"),
                }
            })
            .collect()
    }

    /// The fault request `ordinal` on `api` gets, if any: a pure function of the seed and
    /// ordinal (and of whether it streams: stream faults skip a whole answer).
    pub fn pick(&self, seed: u64, ordinal: u64, api: Api, streaming: bool) -> Option<FaultKind> {
        if self.entries.is_empty() {
            return None;
        }
        let u = fault_uniform(seed, ordinal);
        let mut edge = 0.0;
        for entry in self.entries.iter().filter(|e| e.applies(api, streaming)) {
            edge += entry.rate;
            if u < edge {
                return Some(entry.kind);
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
    /// The connection is reset (TCP RST) instead of sending event K; on HTTP/2, the stream.
    Reset,
}

impl StreamFaultKind {
    /// The name used in settings, headers and metrics.
    pub fn name(self) -> &'static str {
        match self {
            StreamFaultKind::Error => "error",
            StreamFaultKind::Close => "close",
            StreamFaultKind::Truncate => "truncate",
            StreamFaultKind::Stall => "stall",
            StreamFaultKind::Reset => "reset",
        }
    }

    pub const ALL: [StreamFaultKind; 5] = [
        StreamFaultKind::Error,
        StreamFaultKind::Close,
        StreamFaultKind::Truncate,
        StreamFaultKind::Stall,
        StreamFaultKind::Reset,
    ];
}

impl std::fmt::Display for StreamFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.kind.name(), self.at)
    }
}

impl std::str::FromStr for StreamFault {
    type Err = ();

    fn from_str(text: &str) -> Result<StreamFault, ()> {
        let (kind, at) = text.trim().split_once('@').ok_or(())?;
        let kind = StreamFaultKind::ALL
            .into_iter()
            .find(|k| k.name() == kind)
            .ok_or(())?;
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
                "timestamps" => out.timestamps = true,
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

/// The fault request `ordinal` on `api` gets, forced by its headers or drawn from the
/// configured rates: `Err` with the error answer (counted), or the mid-stream fault a stream
/// is to break with (`None` for a normal answer).
pub fn check(
    state: &State,
    overrides: &Overrides,
    ordinal: u64,
    provider: Provider,
    api: Api,
    streaming: bool,
) -> Result<Option<StreamFault>, Box<Response<MockBody>>> {
    let forced = match (overrides.status, overrides.stream_fault) {
        (Some(status), _) => Some(FaultKind::Status(status)),
        (None, Some(fault)) if streaming => Some(FaultKind::Stream(fault)),
        _ => None,
    };
    let seed = state.config.latency.seed;
    match forced.or_else(|| state.config.faults.pick(seed, ordinal, api, streaming)) {
        Some(FaultKind::Status(status)) => {
            state.metrics.fault(status);
            Err(Box::new(response(status, provider)))
        }
        Some(FaultKind::Stream(fault)) => Ok(Some(fault)),
        None => Ok(None),
    }
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
        let settings = ["429:2%", "500:0.01", "messages:529:3%", "chat:reset@4:5%"];
        let rates = FaultRates::parse(&settings.map(String::from)).unwrap();
        assert_eq!(
            rates.to_settings(),
            ["429:2%", "500:1%", "messages:529:3%", "chat:reset@4:5%"]
        );
        let reset = FaultKind::Stream(StreamFault {
            kind: StreamFaultKind::Reset,
            at: 4,
        });
        let count = |api: Api, streaming: bool, kind: FaultKind| {
            (0..100_000)
                .filter(|o| rates.pick(7, *o, api, streaming) == Some(kind))
                .count()
        };
        let within = |n: usize, share: f64| (n as f64 - 100_000.0 * share).abs() < 300.0;
        assert!(within(count(Api::Chat, true, FaultKind::Status(429)), 0.02));
        assert!(within(
            count(Api::Chat, false, FaultKind::Status(500)),
            0.01
        ));
        assert!(within(count(Api::Chat, true, reset), 0.05));
        // A stream fault never touches a whole answer, nor a route it does not name.
        assert_eq!(count(Api::Chat, false, reset), 0);
        assert_eq!(count(Api::Responses, true, reset), 0);
        assert_eq!(count(Api::Chat, true, FaultKind::Status(529)), 0);
        assert!(within(
            count(Api::Messages, false, FaultKind::Status(529)),
            0.03
        ));
        // The same seed and ordinal always give the same answer.
        assert_eq!(
            rates.pick(7, 41, Api::Chat, true),
            rates.pick(7, 41, Api::Chat, true)
        );
    }

    #[test]
    fn bad_rates_are_refused() {
        for bad in [
            "429",
            "200:1%",
            "429:150%",
            "x:1%",
            "429:-1%",
            "images:429:1%",
            "boom@3:1%",
            "reset@x:1%",
        ] {
            assert!(FaultRates::parse(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(FaultRates::parse(&["429:60%".into(), "500:50%".into()]).is_err());
        // Rates of different routes do not add up.
        assert!(FaultRates::parse(&["chat:429:60%".into(), "messages:529:60%".into()]).is_ok());
        assert_eq!(
            FaultRates::parse(&[]).unwrap().pick(0, 0, Api::Chat, true),
            None
        );
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
