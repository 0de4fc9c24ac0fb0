//! One worker's connections to one target: opened ahead of the start, reused, and opened anew
//! (up to a cap) when every one is busy. Time spent waiting for a connection counts in the
//! response time of the request that waited.

use std::cell::{Cell, RefCell};
use std::io;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::plan::Target;
use crate::recorder::ErrorKind;
use crate::timed_io::{LastRead, TimedStream};

pub type Sender = SendRequest<Full<Bytes>>;

/// A connection: its request sender and when it last read from its socket.
type Connection = (Sender, LastRead);

/// Connections of one worker to one target.
#[derive(Debug)]
pub struct Pool {
    target: Target,
    cap: usize,
    connect_timeout: Duration,
    idle: RefCell<Vec<Connection>>,
    clock: quanta::Clock,
    open: Cell<usize>,
    freed: Notify,
    /// Connections opened, ever.
    pub opened: Cell<u64>,
    /// Requests sent on an already-open connection (opened ahead, or kept alive).
    pub reused: Cell<u64>,
}

/// A connection lent to one request. Dropped without [`Lease::give_back`] (after an error), it
/// is closed and its slot freed.
#[derive(Debug)]
pub struct Lease<'a> {
    pool: &'a Pool,
    pub sender: Option<Sender>,
    /// When the connection last read bytes off its socket.
    pub last_read: LastRead,
}

impl Lease<'_> {
    /// Returns a connection that finished its response cleanly to the idle set.
    pub fn give_back(mut self) {
        if let Some(sender) = self.sender.take() {
            if sender.is_closed() {
                self.pool.close_one();
            } else {
                let last_read = self.last_read.clone();
                self.pool.idle.borrow_mut().push((sender, last_read));
                self.pool.freed.notify_one();
            }
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if self.sender.take().is_some() {
            self.pool.close_one();
        }
    }
}

impl Pool {
    pub fn new(target: Target, cap: usize, connect_timeout: Duration) -> Pool {
        Pool {
            target,
            cap,
            connect_timeout,
            idle: RefCell::new(Vec::with_capacity(cap)),
            clock: quanta::Clock::new(),
            open: Cell::new(0),
            freed: Notify::new(),
            opened: Cell::new(0),
            reused: Cell::new(0),
        }
    }

    fn close_one(&self) {
        self.open.set(self.open.get() - 1);
        self.freed.notify_one();
    }

    /// Opens up to `n` connections ahead of the load. Stops at the first failure and returns it.
    pub async fn preopen(&self, n: usize) -> Result<(), ErrorKind> {
        for _ in 0..n.min(self.cap) {
            let connection = self.connect().await?;
            self.idle.borrow_mut().push(connection);
        }
        Ok(())
    }

    /// A connection: an idle one, else a new one under the cap, else the next one freed.
    pub async fn acquire(&self) -> Result<Lease<'_>, ErrorKind> {
        loop {
            let idle = self.idle.borrow_mut().pop();
            if let Some((sender, last_read)) = idle {
                if sender.is_closed() {
                    self.open.set(self.open.get() - 1);
                    continue;
                }
                self.reused.set(self.reused.get() + 1);
                return Ok(Lease {
                    pool: self,
                    sender: Some(sender),
                    last_read,
                });
            }
            if self.open.get() < self.cap {
                let (sender, last_read) = self.connect().await?;
                return Ok(Lease {
                    pool: self,
                    sender: Some(sender),
                    last_read,
                });
            }
            self.freed.notified().await;
        }
    }

    /// Opens one connection, counted against the cap.
    async fn connect(&self) -> Result<Connection, ErrorKind> {
        self.open.set(self.open.get() + 1);
        let result = tokio::time::timeout(self.connect_timeout, self.handshake()).await;
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

    async fn handshake(&self) -> Result<Connection, ErrorKind> {
        let tcp = TcpStream::connect(self.target.resolved)
            .await
            .map_err(|e| connect_error(&e))?;
        let _ = tcp.set_nodelay(true);
        let (stream, last_read) = TimedStream::new(tcp, self.clock.clone());
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Connect)?;
        tokio::task::spawn_local(async move {
            // Errors surface to the request using the connection.
            let _ = connection.await;
        });
        Ok((sender, last_read))
    }
}

fn connect_error(err: &io::Error) -> ErrorKind {
    match err.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        io::ErrorKind::TimedOut => ErrorKind::ConnectTimeout,
        _ => ErrorKind::Connect,
    }
}
