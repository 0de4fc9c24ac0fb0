//! One exchange over HTTP/2, as a stream on one of the worker's connections.

use gatebench_shared::clock::{monotonic_ns, RECEIVED_HEADER, STARTED_HEADER};
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
    // A handle of its own, checked ready (no GOAWAY, stream ids left): h2 queues a stream
    // over the server's limit, not the handle.
    let (mut sender, target_wait_ns) = pool.acquire().await?;
    let request = template.request(slot.index);
    let body = template.body();
    let sent_ns = clock.now_ns();
    let (response, mut sending) = sender
        .send_request(request, body.is_empty())
        .map_err(|e| error_kind(&e))?;
    if !body.is_empty() {
        // Buffered by h2 and sent as the windows allow; the last frame ends the stream.
        sending
            .send_data(body.clone(), true)
            .map_err(|e| error_kind(&e))?;
    }
    let response = response.await.map_err(|e| error_kind(&e))?;
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
    while let Some(data) = body.data().await {
        let data = data.map_err(|e| error_kind(&e))?;
        let at = monotonic_ns();
        reading.feed(&data, clock.ns_of(at));
        // The bytes are read: the server may send as many more.
        let _ = body.flow_control().release_capacity(data.len());
        last = Some(at);
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
