//! The generator's HTTP/2 client (`--http2`): hyper's, its streams multiplexed over a worker's
//! connections. The connections are opened ahead of the start, like HTTP/1.1's, and each
//! request takes the next one in turn; a connection that closed is opened anew by the request
//! that finds it so. Flow control and the server's stream limit are hyper's: a request over the
//! limit waits in hyper's queue, and that wait counts in its response time.
//!
//! Unlike the HTTP/1.1 client, a body's bytes are timed when their frame reaches the request's
//! task, not when the connection's task read them off the socket.

mod exchange;
mod request;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use gatebench_shared::clock::monotonic_ns;
use http_body_util::Full;
use hyper::client::conn::http2::{Builder, SendRequest};
use hyper_util::rt::TokioIo;

pub use exchange::exchange;
pub use request::RequestTemplate;

use crate::results::target::Target;
use crate::wire::outcome::ErrorKind;
use crate::wire::transport::{Dials, Transport};

/// A handle to send requests on one HTTP/2 connection.
pub type Sender = SendRequest<Full<Bytes>>;

/// One worker's HTTP/2 connections to one target.
#[derive(Debug)]
pub struct Http2Pool {
    target: Target,
    transport: Transport,
    connect_timeout: Duration,
    /// Each connection's handle; `None` until opened, or after it closed.
    senders: RefCell<Vec<Option<Sender>>>,
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
            senders: RefCell::new(vec![None; cap.max(1)]),
            next: Cell::new(0),
            opened: Cell::new(0),
            reused: Cell::new(0),
            dials: RefCell::default(),
        }
    }

    /// Opens up to `n` connections ahead of the load. Stops at the first failure and returns it.
    pub async fn preopen(&self, n: usize) -> Result<(), ErrorKind> {
        let cap = self.senders.borrow().len();
        for i in 0..n.min(cap) {
            let sender = self.connect().await?;
            self.senders.borrow_mut()[i] = Some(sender);
        }
        Ok(())
    }

    /// The next connection in turn (opened now if it is not open), and how long opening it
    /// took (ns): the target's part of the wait.
    pub async fn acquire(&self) -> Result<(Sender, u64), ErrorKind> {
        let i = self.next.get();
        self.next.set((i + 1) % self.senders.borrow().len());
        let open = self.senders.borrow()[i]
            .as_ref()
            .filter(|s| !s.is_closed())
            .cloned();
        if let Some(sender) = open {
            self.reused.set(self.reused.get() + 1);
            return Ok((sender, 0));
        }
        let started = monotonic_ns();
        let sender = self.connect().await?;
        self.senders.borrow_mut()[i] = Some(sender.clone());
        Ok((sender, monotonic_ns().saturating_sub(started)))
    }

    /// Opens one connection and starts its task on this thread.
    async fn connect(&self) -> Result<Sender, ErrorKind> {
        let opening = async {
            let (stream, dial) = match self.transport.connect(&self.target).await {
                Ok(opened) => opened,
                Err(err) => {
                    self.dials.borrow_mut().failed(&err);
                    return Err(err.kind());
                }
            };
            let (sender, connection) = Builder::new(LocalExecutor)
                .handshake(TokioIo::new(stream))
                .await
                .map_err(|_| ErrorKind::Connect)?;
            // The connection's task ends when the connection does; its error, if any, reaches
            // the requests on it.
            tokio::task::spawn_local(connection);
            self.dials.borrow_mut().record(dial);
            Ok(sender)
        };
        let sender = tokio::time::timeout(self.connect_timeout, opening)
            .await
            .map_err(|_| ErrorKind::ConnectTimeout)??;
        self.opened.set(self.opened.get() + 1);
        Ok(sender)
    }
}

/// Runs hyper's background futures on the worker's own thread (its `LocalSet`).
#[derive(Debug, Clone, Copy)]
struct LocalExecutor;

impl<F> hyper::rt::Executor<F> for LocalExecutor
where
    F: Future + 'static,
{
    fn execute(&self, future: F) {
        tokio::task::spawn_local(future);
    }
}

/// The failure kind of a hyper error on a stream or its connection.
pub fn error_kind(err: &hyper::Error) -> ErrorKind {
    if err.is_parse() || err.is_user() {
        ErrorKind::Invalid
    } else if err.is_incomplete_message() {
        ErrorKind::Truncated
    } else {
        ErrorKind::Reset
    }
}
