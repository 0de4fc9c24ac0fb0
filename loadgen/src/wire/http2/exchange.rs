//! One exchange over HTTP/2, as a stream on one of the worker's connections.

use std::cell::RefCell;
use std::future::poll_fn;

use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http2::connection::Conn;
use crate::wire::http2::{Http2Pool, RequestTemplate};
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::RequestSpec;

/// Sends the request of `slot` as a new stream and waits for its whole response, which the
/// connection's task reads. The caller bounds it with the request timeout; dropping it resets
/// the stream, not the connection.
pub async fn exchange(
    pool: &Http2Pool,
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
) -> Result<Exchange, ErrorKind> {
    let (conn, target_wait_ns) = pool.acquire().await?;
    exchange_on(&conn, template, spec, clock, slot, target_wait_ns).await
}

/// [`exchange`] on connection `conn`, which took `target_wait_ns` to get.
pub(crate) async fn exchange_on(
    conn: &RefCell<Conn>,
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
    target_wait_ns: u64,
) -> Result<Exchange, ErrorKind> {
    let sent_ns = clock.now_ns();
    let mut pending = Some(Exchange {
        due_ns: slot.due_ns,
        dispatched_ns: slot.dispatched_ns,
        sent_ns,
        target_wait_ns,
        stream: spec.stream,
        ..Exchange::default()
    });
    let (fields, seq) = template.block(slot.index);
    let block = [fields[0], fields[1], seq.as_bytes()];
    let mut request = Request {
        conn,
        ticket: None,
        id: None,
    };
    let id = poll_fn(|cx| {
        request.conn.borrow_mut().poll_open(
            cx,
            &mut request.ticket,
            &block,
            template.body(),
            &mut pending,
            slot.keep_answer,
            clock.start_mono_ns,
        )
    })
    .await?;
    request.id = Some(id);
    let outcome = poll_fn(|cx| request.conn.borrow_mut().poll_outcome(cx, id)).await;
    request.id = None;
    outcome
}

/// A request's place on its connection: in the queue for the stream limit, or its stream.
/// Dropped before its outcome (the request timed out or was cancelled), it leaves the queue
/// or resets its stream.
struct Request<'a> {
    conn: &'a RefCell<Conn>,
    ticket: Option<u64>,
    id: Option<u32>,
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if self.ticket.is_some() || self.id.is_some() {
            self.conn.borrow_mut().forget(&mut self.ticket, self.id);
        }
    }
}
