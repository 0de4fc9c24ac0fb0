//! The generator's HTTP/2 client (`--http2`): a client of its own, its streams multiplexed
//! over a worker's connections. The connections are opened ahead of the start, like
//! HTTP/1.1's, and each request takes the next one in turn, or a closed loop's its own
//! ([`Slot::lane`](crate::wire::exchange::Slot)); a connection that closed is opened
//! anew by the first request that finds it so, and the requests that find it while it opens
//! wait for it. A request over the server's stream limit waits, in order, for a stream to end,
//! and that wait counts in its response time.
//!
//! It speaks what a load generator needs and no more (RFC 9113): a request's head is
//! pre-encoded with no HPACK table ([`hpack`]), its body is sent as the server's windows
//! allow, and the response is read by the connection's task as its frames arrive
//! ([`connection`]), timed by the read that brought them, as HTTP/1.1's are. The `h2` crate
//! this replaced spent about 15,700 instructions a request on its streams, header maps and
//! HPACK tables (BENCHMARKS.md, "loadgen's own HTTP/2 client").

mod connection;
mod driver;
mod exchange;
mod frame;
mod hpack;
mod request;
#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use gatebench_shared::clock::monotonic_ns;
use tokio::sync::OnceCell;
use tokio::task::JoinHandle;

pub use exchange::exchange;
pub use request::RequestTemplate;

use crate::model::target::Target;
use crate::wire::outcome::ErrorKind;
use crate::wire::transport::{Dials, Transport};

use connection::Conn;

/// One open connection: its state, shared with the requests on it, and its task. The task is
/// stopped, and the streams still on it fail, when the connection is dropped.
#[derive(Debug)]
struct Connection {
    conn: Rc<RefCell<Conn>>,
    task: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.task.abort();
        self.conn.borrow_mut().close(ErrorKind::Reset);
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

    /// Connection `lane mod n`, or with no lane the next in turn (opened now if it is not
    /// open, or awaited if another request is opening it), and how long that took (ns): the
    /// target's part of the wait.
    pub(crate) async fn acquire(
        &self,
        lane: Option<usize>,
    ) -> Result<(Rc<RefCell<Conn>>, u64), ErrorKind> {
        let i = slot_of(lane, &self.next, self.slots.borrow().len());
        let slot = {
            let mut slots = self.slots.borrow_mut();
            match slots[i].get() {
                Some(Ok(connection)) => {
                    if connection.conn.borrow().accepts_streams() && !connection.task.is_finished()
                    {
                        self.reused.set(self.reused.get() + 1);
                        return Ok((connection.conn.clone(), 0));
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
            Ok(connection) => Ok((connection.conn.clone(), waited)),
            Err(kind) => Err(*kind),
        }
    }

    /// Keeps `old` while its task runs (streams it still carries are answered), and lets go
    /// of those whose task ended.
    fn retire(&self, old: Slot) {
        let running = |slot: &Slot| matches!(slot.get(), Some(Ok(c)) if !c.task.is_finished());
        let mut retired = self.retired.borrow_mut();
        retired.retain(running);
        if running(&old) {
            retired.push(old);
        }
    }

    /// Opens one connection, starts its task on this thread, and waits for the server's
    /// SETTINGS (the stream limit among them), so that the first requests do not open more
    /// streams than the server allows and have them refused.
    async fn connect(&self) -> Result<Connection, ErrorKind> {
        let opening = async {
            let (stream, dial) = match self.transport.connect(&self.target).await {
                Ok(opened) => opened,
                Err(err) => {
                    self.dials.borrow_mut().failed(&err);
                    return Err(err.kind());
                }
            };
            let conn = Rc::new(RefCell::new(Conn::new()));
            let task = tokio::task::spawn_local(driver::drive(conn.clone(), stream));
            let connection = Connection { conn, task };
            std::future::poll_fn(|cx| connection.conn.borrow_mut().poll_settled(cx))
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

/// The slot of `n` a request takes: its lane's, or with none the next in turn (`next`, moved
/// on).
fn slot_of(lane: Option<usize>, next: &Cell<usize>, n: usize) -> usize {
    match lane {
        Some(lane) => lane % n,
        None => {
            let i = next.get();
            next.set((i + 1) % n);
            i
        }
    }
}
