//! One exchange over HTTP/2, as a stream on one of the worker's connections.

use gatebench_shared::clock::{monotonic_ns, RECEIVED_HEADER, STARTED_HEADER};
use http_body_util::BodyExt;
use hyper::HeaderMap;

use crate::wire::clock::RunClock;
use crate::wire::exchange::{Reading, Slot};
use crate::wire::http2::{error_kind, Http2Pool, RequestTemplate};
use crate::wire::outcome::MockTimes;
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::RequestSpec;

/// Sends the request of `slot` as a new stream and reads its whole response. The caller bounds
/// it with the request timeout; dropping it resets the stream, not the connection.
pub async fn exchange(
    pool: &Http2Pool,
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
) -> Result<Exchange, ErrorKind> {
    let (mut sender, target_wait_ns) = pool.acquire().await?;
    let request = template.request(slot.index);
    let sent_ns = clock.now_ns();
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| error_kind(&e))?;
    let x = Exchange {
        due_ns: slot.due_ns,
        dispatched_ns: slot.dispatched_ns,
        sent_ns,
        target_wait_ns,
        stream: spec.stream,
        mock_times: mock_times(response.headers()),
        ..Exchange::default()
    };
    let mut reading = Reading::new(x, response.status().as_u16(), slot.keep_answer);
    let mut body = response.into_body();
    let mut last = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| error_kind(&e))?;
        if let Some(data) = frame.data_ref() {
            let at = monotonic_ns();
            reading.feed(data, clock.ns_of(at));
            last = Some(at);
        }
    }
    let done_ns = last.map_or_else(|| clock.now_ns(), |at| clock.ns_of(at));
    reading.finish(done_ns)
}

/// The mock's `x-mock-received-ns` and `x-mock-started-ns`, when it sent both.
fn mock_times(headers: &HeaderMap) -> Option<MockTimes> {
    let value = |name| headers.get(name)?.to_str().ok()?.trim().parse().ok();
    Some(MockTimes {
        received_ns: value(RECEIVED_HEADER)?,
        started_ns: value(STARTED_HEADER)?,
    })
}
