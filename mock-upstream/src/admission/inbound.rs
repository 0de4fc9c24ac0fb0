//! What every API route does around its own work: before it, the schedule index, the key, the
//! `x-mock-*` headers and the body; then the fault check, the request's latency draw and the
//! rate limiter's decision (a refusal answered here, in the provider's shape); and for a whole
//! (non-streamed) answer, the wait until it is due.

use std::borrow::Cow;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use bytes::Bytes;
use gatebench_shared::seeded::{self, Stream};
use gatebench_shared::RequestDraw;
use hyper::{Request, Response, StatusCode};

use crate::admission::error_body;
use crate::admission::faults::{self, Overrides};
use crate::admission::rejection::Rejection;
use crate::admission::request::{read_body_within, seq, BodyError, RequestBody};
use crate::answer::body::MockBody;
use crate::catalog::template::json_escaped;
use crate::catalog::Catalog;
use crate::config::{Api, Provider, StreamFault};
use crate::observability::metrics::RouteKind;
use crate::ratelimit::{Exceeded, Quota, Refusal};
use crate::state::State;

/// When and on what a request arrived.
#[derive(Debug, Clone, Copy)]
pub struct Arrival<'a> {
    /// Arrival time (`CLOCK_MONOTONIC` ns), when the latency model makes answers wait.
    pub start: Option<u64>,
    /// The HTTP/1 connection's socket, for a mid-stream reset; `None` on HTTP/2, where a
    /// reset ends the stream only.
    pub socket: Option<RawFd>,
    /// Set to the `CLOCK_MONOTONIC` receipt time when the request asks for timestamps
    /// (`x-mock-timestamps`); the handler stamps the answer with it. 0 when not asked. (An
    /// atomic only because HTTP/2 needs the handler's future to be `Send`.)
    pub received_ns: &'a AtomicU64,
    /// With `--record`: where the body's user goes once the body is read.
    pub user: Option<&'a std::sync::Mutex<crate::observability::record::UserId>>,
}

/// A request read, checked and ready for its route.
#[derive(Debug)]
pub struct Inbound {
    seq: Option<u64>,
    pub overrides: Overrides,
    /// Arrival time (`CLOCK_MONOTONIC` ns), when the latency model (or a header) makes the
    /// answer wait.
    pub start: Option<u64>,
    pub socket: Option<RawFd>,
    /// The API key, kept only when `--rate-limit` or `--prompt-cache` needs it (`""` for
    /// none).
    key: Option<Box<str>>,
    pub body: Bytes,
    /// Whose endpoint the request came in on.
    pub provider: Provider,
    /// The model named by the path (Azure OpenAI's deployment, Gemini's model), JSON-escaped:
    /// the model of a request whose body names none.
    /// (Boxed: most requests have none, and every request moves this struct a few times.)
    path_model: Option<Box<Bytes>>,
}

/// What a route asks of [`Inbound::admit`] for a valid request.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    pub api: Api,
    pub streaming: bool,
    /// Tokens in the prompt, and the output cap, for the rate limit's token count.
    pub prompt_tokens: u64,
    pub max_output: Option<u64>,
    /// True when the request offers `tools`.
    pub has_tools: bool,
}

/// A request let through: its latency draw, the mid-stream fault it is to break with, its
/// standing against the rate limit and whether it is answered with a tool call.
#[derive(Debug)]
pub struct Admitted {
    pub draw: RequestDraw,
    pub stream_fault: Option<StreamFault>,
    /// The answer ends as the provider's content filter ends it.
    pub content_filter: bool,
    pub limits: Limits,
    pub tool_call: bool,
}

/// A request's standing against `--rate-limit`, if one is set.
#[derive(Debug)]
pub struct Limits(Option<Box<Quota>>);

impl Limits {
    /// Puts the rate-limit state on the answer's headers (nothing without `--rate-limit`),
    /// over the fixed set's own rate-limit headers, which are first expanded into the map.
    pub fn stamp(&self, response: &mut Response<MockBody>, state: &State) {
        if let Some(quota) = &self.0 {
            expand_fixed_headers(response, &state.catalog);
            quota.stamp(response.headers_mut());
        }
    }
}

/// Moves the answer's fixed header set into its header map, ahead of the headers already
/// there (which win over fixed ones of the same name): what hyper's path does with every
/// answer, and what a route does before it overrides a fixed header.
pub fn expand_fixed_headers(response: &mut Response<MockBody>, catalog: &Catalog) {
    if let Some(fixed) = response.body_mut().take_fixed_headers() {
        let added = std::mem::replace(response.headers_mut(), catalog.fixed_map(fixed));
        response.headers_mut().extend(added);
    }
}

/// Reads `req` (taking its body out): its `x-gatebench-seq`, its key (with `--require-api-key`), its `x-mock-*`
/// headers and its body under the size limit. Errors are in OpenAI's shape; the Anthropic
/// route turns them into its own.
pub async fn receive(
    state: &State,
    req: &mut Request<RequestBody>,
    arrival: Arrival<'_>,
    provider: Provider,
) -> Result<Inbound, Rejection> {
    let seq = seq(req.headers()).map_err(|_| bad_seq(provider))?;
    crate::admission::auth::check(
        state.config.require_api_key.as_deref(),
        req.headers(),
        provider,
    )?;
    let keyed = state.config.rate_limit.is_set() || state.prompt_cache.is_some();
    let key = keyed.then(|| {
        crate::admission::auth::key(req.headers(), provider)
            .unwrap_or("")
            .into()
    });
    let overrides = Overrides::from_headers(req.headers())?;
    if overrides.timestamps {
        let now = gatebench_shared::clock::monotonic_ns();
        arrival.received_ns.store(now, Relaxed);
    }
    let start = arrival
        .start
        .or_else(|| (!overrides.latency.is_empty()).then(gatebench_shared::clock::monotonic_ns));
    let path_model = path_model(provider, req.uri().path());
    let body = std::mem::replace(req.body_mut(), RequestBody::Whole(Bytes::new()));
    let limit = state.config.max_body_bytes;
    let timeout = state.config.body_timeout;
    let body = read_body_within(req.headers(), body, limit, timeout)
        .await
        .map_err(|e| body_refused(e, limit, timeout))?;
    state.metrics.bytes_in(body.len());
    if let Some(user) = arrival.user {
        *user.lock().unwrap_or_else(|e| e.into_inner()) =
            crate::observability::record::user_in_body(&body);
    }
    Ok(Inbound {
        seq,
        overrides,
        start,
        socket: arrival.socket,
        key,
        body,
        provider,
        path_model,
    })
}

/// The answer to an `x-gatebench-seq` that is not a whole number, in `provider`'s words.
#[cold]
fn bad_seq(provider: Provider) -> Rejection {
    let message = match provider {
        Provider::OpenAi | Provider::Azure | Provider::Gemini | Provider::Bedrock => {
            "Invalid x-gatebench-seq header: expected a whole number."
        }
        Provider::Anthropic => "x-gatebench-seq: expected a whole number",
    };
    Rejection::bad_request(message, None, None)
}

/// The model named in the path (Azure's deployment, Gemini's and Bedrock's model), JSON-escaped
/// to be echoed.
#[inline]
fn path_model(provider: Provider, path: &str) -> Option<Box<Bytes>> {
    match provider {
        Provider::Azure | Provider::Gemini | Provider::Bedrock => {
            crate::admission::router::model_in_path(path)
                .map(|model| Box::new(Bytes::from(json_escaped(model))))
        }
        Provider::OpenAi | Provider::Anthropic => None,
    }
}

/// The answer to a body that could not be read: over `limit` bytes, broken, or not in within
/// `timeout`.
#[cold]
fn body_refused(e: BodyError, limit: u64, timeout: std::time::Duration) -> Rejection {
    match e {
        BodyError::TooLarge => Rejection::too_large(limit),
        BodyError::Read => Rejection::bad_request("Could not read the request body.", None, None),
        BodyError::TimedOut => Rejection::body_timed_out(timeout),
    }
}

/// The 429 in `provider`'s shape for a request the rate limiter refused, with its key's
/// rate-limit headers and the wait it asks for.
#[cold]
#[inline(never)]
fn rate_limited(refusal: &Refusal, provider: Provider) -> Rejection {
    let words = error_body::rate_limited(provider, &refusal.exceeded);
    let mut rejection = Rejection::in_words(StatusCode::TOO_MANY_REQUESTS, words);
    rejection.extra_headers = Some(Box::new(refusal.quota.headers()));
    match refusal.exceeded {
        Exceeded::Rate { wait, .. } => {
            let wait_ms = wait.as_millis().max(1) as u64;
            let retry_after = wait_ms.div_ceil(1000).to_string();
            rejection.set_header("retry-after", &retry_after);
            if provider != Provider::Anthropic {
                rejection.set_header("retry-after-ms", &wait_ms.to_string());
            }
            rejection.set_header("x-should-retry", "true");
        }
        // Waiting does not help.
        Exceeded::TooLarge { .. } => rejection.set_header("x-should-retry", "false"),
    }
    rejection
}

impl Inbound {
    /// The request's latency draw (and mid-stream fault), or the error it gets instead
    /// (forced by a header or drawn from the configured rates) as `provider` answers it.
    /// Call once the request is valid. The error is boxed, so the common path moves only the
    /// draw.
    pub fn admit(&self, state: &State, ask: Ask) -> Result<Admitted, Box<Response<MockBody>>> {
        let admitted = self.admit_or_fault(state, ask);
        if admitted.is_err() {
            // A faulted request is a request the route received, too.
            state.metrics.request(RouteKind::of(ask.api, ask.streaming));
        }
        admitted
    }

    fn admit_or_fault(&self, state: &State, ask: Ask) -> Result<Admitted, Box<Response<MockBody>>> {
        let ordinal = self.seq.unwrap_or_else(|| state.next_ordinal());
        let provider = self.provider;
        let steer = state.control.in_force();
        let steer = steer.as_deref();
        let flaw = faults::check(
            state,
            &self.overrides,
            steer,
            ordinal,
            provider,
            ask.api,
            ask.streaming,
        )?;
        let steered = steer.map(|s| &s.latency);
        let draw =
            crate::timing::latency::draw(&state.config, steered, &self.overrides.latency, ordinal);
        let quota = match &self.key {
            Some(key) => {
                let output = u64::from(draw.tokens()).min(ask.max_output.unwrap_or(u64::MAX));
                let tokens = ask.prompt_tokens + output;
                match state.limiter.take(key, tokens, provider) {
                    Some(Ok(quota)) => Some(Box::new(quota)),
                    Some(Err(refusal)) => {
                        state.metrics.fault(429);
                        return Err(Box::new(rate_limited(&refusal, provider).into_response()));
                    }
                    None => None,
                }
            }
            None => None,
        };
        let tool_call = ask.has_tools
            && state.config.tool_calls > 0.0
            && seeded::uniform(state.config.seed, Stream::ToolCalls, ordinal)
                < state.config.tool_calls;
        Ok(Admitted {
            draw,
            stream_fault: match flaw {
                Some(faults::Flaw::Stream(fault)) => Some(fault),
                _ => None,
            },
            content_filter: flaw == Some(faults::Flaw::ContentFilter),
            limits: Limits(quota),
            tool_call,
        })
    }

    /// The model as the request wrote it, ready to echo: a slice of the body when it has no
    /// escapes, else re-escaped. On Azure OpenAI and Gemini, the path's model when the body
    /// names none.
    pub fn echoed(&self, model: &Option<Cow<'_, str>>) -> Option<Bytes> {
        match model {
            Some(Cow::Borrowed(name)) => Some(self.body.slice_ref(name.as_bytes())),
            Some(Cow::Owned(name)) => Some(Bytes::from(json_escaped(name))),
            None => self.path_model.as_deref().cloned(),
        }
    }

    /// The request's API key as the prompt cache scopes it (`""` for none).
    pub fn key(&self) -> &str {
        self.key.as_deref().unwrap_or("")
    }

    /// Waits until a whole answer delayed by `delay_us` is due, recording the timer's lateness.
    pub async fn wait(&self, state: &State, delay_us: u64) {
        if let (Some(start), true) = (self.start, delay_us > 0) {
            let due = start + delay_us * 1000;
            let now = crate::timing::timer::sleep_until(due).await;
            state.metrics.emission_error.record((now - due) / 1000);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RateLimit;
    use crate::ratelimit::Limiter;

    #[test]
    fn a_key_runs_down_and_others_are_apart() {
        let limiter = Limiter::new(RateLimit::parse("rpm=3,tpm=100").unwrap());
        // What the pipeline answers a request the limiter refuses.
        let refuse = |key: &str, tokens: u64, provider: Provider| {
            let refusal = limiter.take(key, tokens, provider).unwrap().unwrap_err();
            rate_limited(&refusal, provider)
        };
        for _ in 0..3 {
            assert!(limiter.take("a", 10, Provider::OpenAi).unwrap().is_ok());
        }
        let refused = refuse("a", 10, Provider::OpenAi);
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.code, Some("rate_limit_exceeded"));
        assert_eq!(refused.kind, "requests");
        // One request refills every 20 s at 3 per minute.
        let wait: u64 = refused.header("retry-after-ms").unwrap().parse().unwrap();
        assert!((19_000..=20_000).contains(&wait), "{wait}");
        assert_eq!(refused.header("retry-after"), Some("20"));
        assert_eq!(refused.header("x-ratelimit-remaining-requests"), Some("0"));
        assert_eq!(refused.header("x-ratelimit-remaining-tokens"), Some("70"));
        // Another key has its own buckets.
        let quota = limiter.take("b", 95, Provider::OpenAi).unwrap().unwrap();
        let headers = quota.headers();
        assert_eq!(headers["x-ratelimit-remaining-requests"], "2");
        assert_eq!(headers["x-ratelimit-remaining-tokens"], "5");
        // Tokens refuse before requests run out.
        let refused = refuse("b", 20, Provider::Anthropic);
        assert_eq!(refused.kind, "rate_limit_error");
        assert_eq!(
            refused.header("anthropic-ratelimit-tokens-remaining"),
            Some("5")
        );
        assert!(refused.header("retry-after").is_some());
        // More than a minute's tokens can never fit.
        let refused = refuse("c", 101, Provider::OpenAi);
        assert_eq!(refused.header("x-should-retry"), Some("false"));
    }
}
