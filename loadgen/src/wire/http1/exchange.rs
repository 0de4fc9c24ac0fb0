//! One exchange over HTTP/1.1, on a connection of the worker's pool.

use gatebench_shared::clock::monotonic_ns;

use crate::wire::clock::RunClock;
use crate::wire::exchange::{Reading, Slot};
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::{Failure, RequestTemplate};
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::RequestSpec;

/// Sends the request of `slot` and reads its whole response. The caller bounds it with the
/// request timeout.
pub async fn exchange(
    pool: &Http1Pool,
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
) -> Result<Exchange, ErrorKind> {
    let Slot {
        index,
        due_ns,
        dispatched_ns,
        keep_answer,
        // One request at a time a connection: any free one will do.
        lane: _,
    } = slot;
    // One reading for an idle connection's age and the send (the pool's real clock).
    let mut lease = pool.acquire(monotonic_ns()).await?;
    let target_wait_ns = lease.target_wait_ns;
    let sent_ns = clock.ns_of(lease.ready_ns);
    let connection = lease.connection();
    connection
        .send(|out| template.encode(index, out))
        .await
        .map_err(error_kind)?;
    let response = connection.read_head().await.map_err(error_kind)?;
    let x = Exchange {
        due_ns,
        dispatched_ns,
        sent_ns,
        target_wait_ns,
        stream: spec.stream,
        mock_times: response.mock_times,
        ..Exchange::default()
    };
    let mut reading = Reading::new(x, response.status, keep_answer);
    connection
        .read_body(response, |data, at| reading.feed(data, clock.ns_of(at)))
        .await
        // A stream whose connection closed early is truncated; one reset (RST) is a reset.
        .map_err(error_kind)?;
    let done_ns = connection
        .last_read()
        .map_or_else(|| clock.now_ns(), |at| clock.ns_of(at));
    // The response ended cleanly: the connection can carry the next request.
    lease.give_back();
    reading.finish(done_ns)
}

fn error_kind(failure: Failure) -> ErrorKind {
    match failure {
        Failure::Reset => ErrorKind::Reset,
        Failure::Truncated => ErrorKind::Truncated,
        Failure::Invalid => ErrorKind::Invalid,
    }
}
