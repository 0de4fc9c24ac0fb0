//! One worker's connections to one target: opened ahead of the start, reused, and opened anew
//! (up to a cap) when every one is busy. Time spent waiting for a connection counts in the
//! response time of the request that waited. A lease also tells how much of that wait the
//! target caused (its handshake, or every connection busy until one's answer was read in
//! full); the rest of the time from dispatch to send is the generator's own delay. The pool
//! reads the real `CLOCK_MONOTONIC`, as its connections stamp their reads: HTTP/1.1 never runs
//! on simulated time.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use gatebench_shared::clock::monotonic_ns;
use tokio::sync::Notify;

use crate::model::target::Target;
use crate::wire::http1::Connection;
use crate::wire::outcome::ErrorKind;
use crate::wire::transport::{ConnectError, Dials, Transport};

/// Longest a connection may sit idle and still be reused. Servers close idle keep-alive
/// connections (Node.js after 5 s, nginx after 75 s, the mock after 90 s), and a request sent
/// as the server's close is on its way fails as a reset; closing it first from this side is
/// race-free. 4 s, like Node's own client pool.
const MAX_IDLE: Duration = Duration::from_secs(4);

/// Connections of one worker to one target.
#[derive(Debug)]
pub struct Http1Pool {
    target: Target,
    transport: Transport,
    cap: usize,
    connect_timeout: Duration,
    /// Longest idle time of a reused connection; `None`: any.
    max_idle: Option<Duration>,
    /// Idle connections, each with the `CLOCK_MONOTONIC` reading (ns) of when it went idle (its
    /// last read); the last one freed is reused first, so a few stay warm and the rest can age
    /// out.
    idle: RefCell<Vec<(Connection, u64)>>,
    open: Cell<usize>,
    freed: Notify,
    /// When a connection was last freed (`CLOCK_MONOTONIC` ns): given back (its last read) or
    /// closed (when it was).
    freed_ns: Cell<u64>,
    /// Connections opened, ever.
    pub opened: Cell<u64>,
    /// Requests sent on an already-open connection (opened ahead, or kept alive).
    pub reused: Cell<u64>,
    /// How long opening each connection took.
    pub dials: RefCell<Dials>,
}

/// A connection lent to one request. Dropped without [`Lease::give_back`] (after an error), it
/// is closed and its slot freed.
#[derive(Debug)]
pub struct Lease<'a> {
    pool: &'a Http1Pool,
    connection: Option<Connection>,
    /// Time (ns) the target held up this lease: connecting, or every connection busy until the
    /// moment one was freed.
    pub target_wait_ns: u64,
    /// When the lease was had (`CLOCK_MONOTONIC` ns): the reading [`Http1Pool::acquire`] was
    /// given when a connection was idle, else one taken once it was connected or freed.
    pub ready_ns: u64,
}

impl Lease<'_> {
    /// The connection lent.
    pub fn connection(&mut self) -> &mut Connection {
        // Invariant: a lease holds its connection until given back or dropped.
        self.connection.as_mut().expect("lease holds a connection")
    }

    /// Returns a connection that finished its exchange cleanly to the idle set (or closes it
    /// if it cannot carry another request). It is idle, and freed, from its last read: the
    /// moment the target let it go.
    pub fn give_back(mut self) {
        if let Some(connection) = self.connection.take() {
            if connection.is_reusable() {
                let at = connection.last_read().unwrap_or_else(monotonic_ns);
                self.pool.idle.borrow_mut().push((connection, at));
                self.pool.freed_ns.set(at);
                self.pool.freed.notify_one();
            } else {
                self.pool.close_one();
            }
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if self.connection.take().is_some() {
            self.pool.close_one();
        }
    }
}

impl Http1Pool {
    pub fn new(
        target: Target,
        transport: Transport,
        cap: usize,
        connect_timeout: Duration,
    ) -> Http1Pool {
        Http1Pool {
            target,
            transport,
            cap,
            connect_timeout,
            max_idle: Some(MAX_IDLE),
            idle: RefCell::new(Vec::with_capacity(cap)),
            open: Cell::new(0),
            freed: Notify::new(),
            freed_ns: Cell::new(0),
            opened: Cell::new(0),
            reused: Cell::new(0),
            dials: RefCell::default(),
        }
    }

    /// Reuses connections however long they were idle: for the ladder, whose connections are
    /// all opened ahead (which may take seconds) and then used at one instant.
    pub fn reusing_any_idle(mut self) -> Http1Pool {
        self.max_idle = None;
        self
    }

    fn close_one(&self) {
        self.open.set(self.open.get() - 1);
        self.freed_ns.set(monotonic_ns());
        self.freed.notify_one();
    }

    /// Opens up to `n` connections ahead of the load. Stops at the first failure and returns it.
    pub async fn preopen(&self, n: usize) -> Result<(), ErrorKind> {
        for _ in 0..n.min(self.cap) {
            let connection = self.connect().await?;
            let now = monotonic_ns();
            self.idle.borrow_mut().push((connection, now));
        }
        Ok(())
    }

    /// A connection: an idle one, else a new one under the cap, else the next one freed.
    /// `now_ns` is a `CLOCK_MONOTONIC` reading the caller just took: an idle connection's age
    /// is read from it, and the lease is ready at it unless it had to wait.
    pub async fn acquire(&self, now_ns: u64) -> Result<Lease<'_>, ErrorKind> {
        let mut now = now_ns;
        let mut target_wait_ns = 0;
        loop {
            let idle = self.idle.borrow_mut().pop();
            if let Some((mut connection, since)) = idle {
                let aged = self
                    .max_idle
                    .is_some_and(|most| Duration::from_nanos(now.saturating_sub(since)) > most);
                if aged || !connection.is_usable() {
                    // Too old to trust, or the server closed it while it was idle.
                    self.open.set(self.open.get() - 1);
                    continue;
                }
                self.reused.set(self.reused.get() + 1);
                return Ok(Lease {
                    pool: self,
                    connection: Some(connection),
                    target_wait_ns,
                    ready_ns: now,
                });
            }
            if self.open.get() < self.cap {
                // Read again: closing aged connections above is the generator's time.
                let started = monotonic_ns();
                let connection = self.connect().await?;
                let ready_ns = monotonic_ns();
                target_wait_ns += ready_ns.saturating_sub(started);
                return Ok(Lease {
                    pool: self,
                    connection: Some(connection),
                    target_wait_ns,
                    ready_ns,
                });
            }
            // Every connection busy: the target's doing until one is freed (its last read);
            // the time from then until this task runs again is the generator's.
            self.freed.notified().await;
            target_wait_ns += self.freed_ns.get().saturating_sub(now);
            now = monotonic_ns();
        }
    }

    /// Opens one connection, counted against the cap.
    async fn connect(&self) -> Result<Connection, ErrorKind> {
        self.open.set(self.open.get() + 1);
        let result = tokio::time::timeout(self.connect_timeout, self.dial()).await;
        let connection = match result {
            Ok(Ok(connection)) => connection,
            Ok(Err(kind)) => {
                self.close_one();
                return Err(kind);
            }
            Err(_) => {
                self.close_one();
                return Err(ErrorKind::ConnectTimeout);
            }
        };
        self.opened.set(self.opened.get() + 1);
        Ok(connection)
    }

    async fn dial(&self) -> Result<Connection, ErrorKind> {
        match self.transport.connect(&self.target).await {
            Ok((stream, dial)) => {
                self.dials.borrow_mut().record(dial);
                Ok(Connection::new(stream))
            }
            Err(err) => Err(self.failed(&err)),
        }
    }

    fn failed(&self, err: &ConnectError) -> ErrorKind {
        self.dials.borrow_mut().failed(err);
        err.kind()
    }
}
