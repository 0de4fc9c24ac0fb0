//! One exchange over HTTP/2, as a stream on one of the worker's connections.

use std::cell::RefCell;
use std::future::poll_fn;

use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http2::connection::{Conn, Failed};
use crate::wire::http2::{Http2Pool, RequestTemplate};
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::RequestSpec;

/// Most connections one request is tried on when the server processed it on none (each told
/// to go away before it read the request).
const MOST_TRIES: usize = 4;

/// Sends the request of `slot` as a new stream and waits for its whole response, which the
/// connection's task reads: on its lane's connection, or on the next in turn. A request the
/// server did not process (a GOAWAY came first) is sent again, on its lane's connection opened
/// anew or on the next in turn; its response time runs from the first try. The caller bounds
/// it with the request timeout; dropping it resets the stream, not the connection.
pub async fn exchange(
    pool: &Http2Pool,
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
) -> Result<Exchange, ErrorKind> {
    let mut first: Option<Sent> = None;
    for _ in 0..MOST_TRIES {
        let (conn, waited) = pool.acquire(slot.lane).await?;
        // The first try's wait for its connection is the target's part of the time to send;
        // a later try's is after the send, in the service time.
        let at = *first.get_or_insert_with(|| Sent {
            sent_ns: clock.now_ns(),
            target_wait_ns: waited,
        });
        match exchange_on(&conn, template, spec, clock, slot, at).await {
            Ok(x) => return Ok(x),
            Err(Failed::Kind(kind)) => return Err(kind),
            Err(Failed::Unprocessed) => {}
        }
    }
    Err(ErrorKind::Reset)
}

/// When a request was first sent (ns on the run's clock), and how long getting the connection
/// for that first try took.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sent {
    pub sent_ns: u64,
    pub target_wait_ns: u64,
}

/// One try of [`exchange`] on connection `conn`.
pub(crate) async fn exchange_on(
    conn: &RefCell<Conn>,
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
    at: Sent,
) -> Result<Exchange, Failed> {
    let mut pending = Some(Exchange {
        due_ns: slot.due_ns,
        dispatched_ns: slot.dispatched_ns,
        sent_ns: at.sent_ns,
        target_wait_ns: at.target_wait_ns,
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
