//! What every API route does around its own work: before it, the schedule index, the key, the
//! `x-mock-*` headers and the body; then the fault check and the request's latency draw; and for
//! a whole (non-streamed) answer, the wait until it is due.

use std::borrow::Cow;
use std::os::fd::RawFd;
use std::time::Duration;

use bytes::Bytes;
use gatebench_shared::RequestDraw;
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::time::Instant;

use crate::body::MockBody;
use crate::faults::{self, Api, Overrides, Provider, StreamFault};
use crate::rejection::Rejection;
use crate::request::{read_body, seq, BodyError};
use crate::state::State;
use crate::template::json_escaped;

/// When and on what a request arrived.
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    /// Arrival time, when the latency model makes answers wait.
    pub start: Option<Instant>,
    /// The HTTP/1 connection's socket, for a mid-stream reset; `None` on HTTP/2, where a
    /// reset ends the stream only.
    pub socket: Option<RawFd>,
}

/// A request read, checked and ready for its route.
#[derive(Debug)]
pub struct Inbound {
    seq: Option<u64>,
    pub overrides: Overrides,
    /// Arrival time, when the latency model (or a header) makes the answer wait.
    pub start: Option<Instant>,
    pub socket: Option<RawFd>,
    pub body: Bytes,
}

/// A request let through: its latency draw, and the mid-stream fault it is to break with.
#[derive(Debug)]
pub struct Admitted {
    pub draw: RequestDraw,
    pub stream_fault: Option<StreamFault>,
}

/// Reads `req`: its `x-gatebench-seq`, its key (with `--require-api-key`), its `x-mock-*`
/// headers and its body under the size limit. Errors are in OpenAI's shape; the Anthropic
/// route turns them into its own.
pub async fn receive(
    state: &State,
    req: Request<Incoming>,
    arrival: Arrival,
    provider: Provider,
) -> Result<Inbound, Rejection> {
    let seq = seq(req.headers()).map_err(|_| {
        let message = match provider {
            Provider::OpenAi => "Invalid x-gatebench-seq header: expected a whole number.",
            Provider::Anthropic => "x-gatebench-seq: expected a whole number",
        };
        Rejection::bad_request(message, None, None)
    })?;
    crate::auth::check(
        state.config.require_api_key.as_deref(),
        req.headers(),
        provider,
    )?;
    let overrides = Overrides::from_headers(req.headers())?;
    let start = arrival
        .start
        .or_else(|| overrides.changes_latency().then(Instant::now));
    let (parts, body) = req.into_parts();
    let limit = state.config.max_body_bytes;
    let body = read_body(&parts.headers, body, limit)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => Rejection::too_large(limit),
            BodyError::Read => {
                Rejection::bad_request("Could not read the request body.", None, None)
            }
        })?;
    Ok(Inbound {
        seq,
        overrides,
        start,
        socket: arrival.socket,
        body,
    })
}

impl Inbound {
    /// The request's latency draw (and mid-stream fault), or the error it gets instead
    /// (forced by a header or drawn from the configured rates) as `provider` answers it.
    /// Call once the request is valid. The error is boxed, so the common path moves only the
    /// draw.
    pub fn admit(
        &self,
        state: &State,
        provider: Provider,
        api: Api,
        streaming: bool,
    ) -> Result<Admitted, Box<Response<MockBody>>> {
        let ordinal = self.seq.unwrap_or_else(|| state.next_ordinal());
        let stream_fault =
            faults::check(state, &self.overrides, ordinal, provider, api, streaming)?;
        Ok(Admitted {
            draw: faults::latency(state, &self.overrides).request(ordinal),
            stream_fault,
        })
    }

    /// The model as the request wrote it, ready to echo: a slice of the body when it has no
    /// escapes, else re-escaped.
    pub fn echoed(&self, model: &Option<Cow<'_, str>>) -> Option<Bytes> {
        match model {
            Some(Cow::Borrowed(name)) => Some(self.body.slice_ref(name.as_bytes())),
            Some(Cow::Owned(name)) => Some(Bytes::from(json_escaped(name))),
            None => None,
        }
    }

    /// Waits until a whole answer delayed by `delay_us` is due, recording the timer's lateness.
    pub async fn wait(&self, state: &State, delay_us: u64) {
        if let (Some(start), true) = (self.start, delay_us > 0) {
            let due = start + Duration::from_micros(delay_us);
            tokio::time::sleep_until(due).await;
            let late = Instant::now().saturating_duration_since(due);
            state.metrics.emission_error.record(late.as_micros() as u64);
        }
    }
}
