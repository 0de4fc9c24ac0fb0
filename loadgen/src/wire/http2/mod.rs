//! The generator's HTTP/2 client (`--http2`): the `h2` crate's, its streams multiplexed over a
//! worker's connections. The connections are opened ahead of the start, like HTTP/1.1's, and
//! each request takes the next one in turn; a connection that closed is opened anew by the
//! first request that finds it so, and the requests that find it while it opens wait for it. Flow control and the server's stream limit are h2's: a request
//! over the limit waits in h2's queue of streams to open, and that wait counts in its response
//! time.
//!
//! Each request's own task opens its stream, sends its body and reads its answer; only the
//! connection's reading and writing run in a task of their own, one per connection. (hyper's
//! client, over the same crate, hands every request to that task through a channel, answers it
//! through another and spawns a task per request to wait for the response: measured in
//! BENCHMARKS.md, "loadgen's HTTP/2 client over h2 itself".)
//!
//! Unlike the HTTP/1.1 client, a body's bytes are timed when their frame reaches the request's
//! task, not when the connection's task read them off the socket.

mod exchange;
mod request;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use gatebench_shared::clock::monotonic_ns;
use h2::client::SendRequest;
use tokio::sync::OnceCell;
use tokio::task::JoinHandle;

pub use exchange::exchange;
pub use request::RequestTemplate;

use crate::model::target::Target;
use crate::wire::outcome::ErrorKind;
use crate::wire::transport::{Dials, Transport};

/// A handle to open streams on one HTTP/2 connection.
pub type Sender = SendRequest<Bytes>;

// The settings hyper's client sends, kept so that a run's frames and windows are what they were
// under hyper: a stream window of 2 MiB and a connection window of 5 MiB (a long answer is never
// held for a WINDOW_UPDATE), 16 KiB frames and header lists, up to 1 MiB buffered per stream, no
// server push.
const STREAM_WINDOW: u32 = 2 << 20;
const CONNECTION_WINDOW: u32 = 5 << 20;
const MAX_FRAME: u32 = 16 << 10;
const MAX_HEADER_LIST: u32 = 16 << 10;
const MAX_SEND_BUFFER: usize = 1 << 20;
/// Streams opened before the server's SETTINGS say how many it allows.
const INITIAL_MAX_SEND_STREAMS: usize = 100;

/// One open connection: the handle its requests clone, and whether its task has ended. The
/// task is stopped when the connection is dropped (h2 does not end a connection whose handles
/// are all gone while it waits to read).
#[derive(Debug)]
struct Connection {
    sender: Sender,
    ended: Rc<Cell<bool>>,
    task: JoinHandle<()>,
}

impl Connection {
    /// A handle of its own, while new streams can open on it: its task runs, no GOAWAY came,
    /// and stream ids are left. (A connection told to go away answers the streams it has, so its task runs
    /// on while no new stream can start there.)
    fn ready_sender(&self) -> Option<Sender> {
        if self.ended.get() {
            return None;
        }
        // A handle of its own has no stream waiting to open, so this only reads the
        // connection's state and never waits.
        let mut sender = self.sender.clone();
        let mut cx = Context::from_waker(Waker::noop());
        matches!(sender.poll_ready(&mut cx), Poll::Ready(Ok(()))).then_some(sender)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A place for one connection: opened once by the first request that needs it, however many
/// wait for it, and replaced when it ended or failed to open.
type Slot = Rc<OnceCell<Result<Connection, ErrorKind>>>;

/// One worker's HTTP/2 connections to one target.
#[derive(Debug)]
pub struct Http2Pool {
    target: Target,
    transport: Transport,
    connect_timeout: Duration,
    slots: RefCell<Vec<Slot>>,
    /// Connections taken out of their slot (a GOAWAY, or out of stream ids) whose streams may
    /// still be answered: kept until their task ends.
    retired: RefCell<Vec<Slot>>,
    next: Cell<usize>,
    /// Connections opened, ever.
    pub opened: Cell<u64>,
    /// Requests sent on an already-open connection.
    pub reused: Cell<u64>,
    /// How long opening each connection took.
    pub dials: RefCell<Dials>,
}

impl Http2Pool {
    pub fn new(
        target: Target,
        transport: Transport,
        cap: usize,
        connect_timeout: Duration,
    ) -> Http2Pool {
        Http2Pool {
            target,
            transport,
            connect_timeout,
            slots: RefCell::new((0..cap.max(1)).map(|_| Slot::default()).collect()),
            retired: RefCell::default(),
            next: Cell::new(0),
            opened: Cell::new(0),
            reused: Cell::new(0),
            dials: RefCell::default(),
        }
    }

    /// Opens up to `n` connections ahead of the load. Stops at the first failure and returns it.
    pub async fn preopen(&self, n: usize) -> Result<(), ErrorKind> {
        let cap = self.slots.borrow().len();
        for i in 0..n.min(cap) {
            let slot = self.slots.borrow()[i].clone();
            if let Err(kind) = slot.get_or_init(|| self.connect()).await {
                return Err(*kind);
            }
        }
        Ok(())
    }

    /// The next connection in turn (opened now if it is not open, or awaited if another
    /// request is opening it), and how long that took (ns): the target's part of the wait.
    pub async fn acquire(&self) -> Result<(Sender, u64), ErrorKind> {
        let i = self.next.get();
        self.next.set((i + 1) % self.slots.borrow().len());
        let slot = {
            let mut slots = self.slots.borrow_mut();
            match slots[i].get() {
                Some(Ok(connection)) => {
                    if let Some(sender) = connection.ready_sender() {
                        self.reused.set(self.reused.get() + 1);
                        return Ok((sender, 0));
                    }
                    let old = std::mem::take(&mut slots[i]);
                    self.retire(old);
                }
                Some(Err(_)) => slots[i] = Slot::default(),
                None => {}
            }
            slots[i].clone()
        };
        let started = monotonic_ns();
        let opened = slot.get_or_init(|| self.connect()).await;
        let waited = monotonic_ns().saturating_sub(started);
        match opened {
            Ok(connection) => Ok((connection.sender.clone(), waited)),
            Err(kind) => Err(*kind),
        }
    }

    /// Keeps `old` while its task runs (streams it still carries are answered), and lets go
    /// of those whose task ended.
    fn retire(&self, old: Slot) {
        let running = |slot: &Slot| matches!(slot.get(), Some(Ok(c)) if !c.ended.get());
        let mut retired = self.retired.borrow_mut();
        retired.retain(running);
        if running(&old) {
            retired.push(old);
        }
    }

    /// Opens one connection, starts its task on this thread, and waits for the server's
    /// preface (its SETTINGS, the stream limit among them), so that the first requests do not
    /// open more streams than the server allows and have them refused.
    async fn connect(&self) -> Result<Connection, ErrorKind> {
        let opening = async {
            let (stream, dial) = match self.transport.connect(&self.target).await {
                Ok(opened) => opened,
                Err(err) => {
                    self.dials.borrow_mut().failed(&err);
                    return Err(err.kind());
                }
            };
            let (sender, mut connection) = h2::client::Builder::new()
                .initial_window_size(STREAM_WINDOW)
                .initial_connection_window_size(CONNECTION_WINDOW)
                .max_frame_size(MAX_FRAME)
                .max_header_list_size(MAX_HEADER_LIST)
                .max_send_buffer_size(MAX_SEND_BUFFER)
                .initial_max_send_streams(INITIAL_MAX_SEND_STREAMS)
                .enable_push(false)
                .handshake::<_, Bytes>(stream)
                .await
                .map_err(|_| ErrorKind::Connect)?;
            let mut ping = connection.ping_pong().ok_or(ErrorKind::Connect)?;
            // The connection's task ends when the connection does; its error, if any, reaches
            // the streams on it.
            let ended = Rc::new(Cell::new(false));
            let flag = ended.clone();
            let task = tokio::task::spawn_local(async move {
                let _ = connection.await;
                flag.set(true);
            });
            let connection = Connection {
                sender,
                ended,
                task,
            };
            // A server sends its SETTINGS first: its answer to a PING comes after them.
            ping.ping(h2::Ping::opaque())
                .await
                .map_err(|_| ErrorKind::Connect)?;
            self.dials.borrow_mut().record(dial);
            Ok(connection)
        };
        let connection = tokio::time::timeout(self.connect_timeout, opening)
            .await
            .map_err(|_| ErrorKind::ConnectTimeout)??;
        self.opened.set(self.opened.get() + 1);
        Ok(connection)
    }
}

/// The failure kind of an h2 error on a stream or its connection: frames or headers from the
/// server that h2 found malformed (and reset the stream or connection for), or a request h2
/// would not send, are `invalid`; a stream or connection the server reset, a GOAWAY, or a
/// connection lost are `reset`.
pub fn error_kind(err: &h2::Error) -> ErrorKind {
    // A reset or a GOAWAY carries its reason, as does an error h2 received as one.
    let from_the_wire = err.is_io() || err.reason().is_some();
    if err.is_library() || !from_the_wire {
        ErrorKind::Invalid
    } else {
        ErrorKind::Reset
    }
}
