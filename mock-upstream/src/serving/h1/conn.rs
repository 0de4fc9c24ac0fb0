//! One HTTP/1.1 connection served by the mock's own server: read a head and its body, call the
//! mock's handler, write the answer in one write (a stream: its head and each event as soon as
//! it is due), and again while the client keeps the connection.
//!
//! Slow clients are held to the same limits as under hyper: a head must be in within
//! `--header-timeout` of the moment the server started waiting for it (idle time between
//! requests included), a body within `--body-timeout` of its head; unacknowledged data is
//! dropped by the socket's `TCP_USER_TIMEOUT`. One timer per connection serves both timeouts and
//! is only re-armed when it fires early, so a busy connection arms it once per timeout period.

use std::future::{poll_fn, Future};
use std::io;
use std::os::fd::AsRawFd;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http_body::Body;
use hyper::Method;
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use super::encode::{self, Framing};
use super::head::{self, Head, Parsed};
use super::out::{trade_out, WRITE_BUFFER};
use super::replay::Replay;
use super::target::Target;
use crate::admission::request::{BodyError, RequestBody};
use crate::answer::body::MockBody;
use crate::answer::sse::ResetOnPurpose;
use crate::catalog::payload::Chunks;
use crate::serving::handler::handle;
use crate::serving::stamp::Stamp;
use crate::state::State;

/// A connection's read buffer starts this large (hyper's too) and grows for a larger body.
const READ_BUFFER: usize = 8 * 1024;

/// A stream's pending bytes are written once they reach this much, even if more is due.
const WRITE_AHEAD: usize = 64 * 1024;

/// How a connection served here ended.
#[derive(Debug)]
pub enum Served {
    /// Closed: by the client, by a timeout, by an answer that closes, or by shutdown.
    Done,
    /// A request the own server does not take: hyper serves the rest of the connection,
    /// starting with the bytes already read.
    HandOff(Replay),
}

/// What waiting for bytes gave.
enum Read {
    Bytes,
    Eof,
    Failed,
    TimedOut,
    Stopped,
}

struct Conn {
    stream: TcpStream,
    buf: BytesMut,
    out: BytesMut,
    /// The connection's one timer, armed lazily (see the module notes).
    timer: Option<Pin<Box<Sleep>>>,
    /// The last read took less than there was room for, so the socket was empty then: the
    /// next wait goes straight to the reactor instead of a `recv` that would fail (nginx's
    /// rule too). Data that arrives after that read raises a new edge-triggered event.
    drained: bool,
    /// The connection's first request target, reused while requests name it.
    target: Target,
    /// The head being read (parsed in place: it is 400 bytes).
    head: Head,
}

/// Serves `stream` until it ends or a request for hyper arrives. `stop` turns true at
/// shutdown: a connection waiting for its next request then closes; one answering finishes
/// first.
pub async fn serve(stream: TcpStream, state: &Arc<State>, stop: watch::Receiver<bool>) -> Served {
    let socket = stream.as_raw_fd();
    let mut conn = Conn {
        stream,
        buf: BytesMut::with_capacity(READ_BUFFER),
        out: BytesMut::with_capacity(WRITE_BUFFER),
        timer: None,
        drained: false,
        target: Target::default(),
        head: Head::default(),
    };
    let config = &state.config;
    let mut stop = stop;
    if *stop.borrow_and_update() {
        return Served::Done;
    }
    let mut stopped = pin!(stop.changed());
    loop {
        // A whole head, within the header timeout of starting to wait for it.
        let mut deadline = None;
        loop {
            match head::parse_seen(&conn.buf, config.max_body_bytes, &mut conn.head) {
                Parsed::Ready => break,
                Parsed::HandOff => return Served::HandOff(conn.replay()),
                Parsed::Partial => {}
            }
            let due = *deadline.get_or_insert_with(|| Instant::now() + config.header_timeout);
            match conn.read(due, stopped.as_mut()).await {
                Read::Bytes => {}
                Read::Eof | Read::Failed | Read::TimedOut | Read::Stopped => return Served::Done,
            }
        }

        // Steered to refuse: the connection closes without an answer.
        if state.control.refusing() {
            return Served::Done;
        }

        // Its body, within the body timeout of the head.
        let (head_len, whole) = (conn.head.len, conn.head.len + conn.head.body_len);
        let failed = conn.read_body(whole, config.body_timeout).await;

        let keep_alive = conn.head.keep_alive && failed.is_none();
        let head_only = conn.head.method == Method::HEAD;
        let request = match failed {
            None => {
                let bytes = conn.buf.split_to(whole).freeze();
                let body = RequestBody::Whole(bytes.slice(head_len..));
                conn.head.request(&bytes, body, &mut conn.target)
            }
            Some(err) => {
                let bytes = conn.buf.split().freeze();
                conn.head
                    .request(&bytes, RequestBody::Failed(err), &mut conn.target)
            }
        };
        let Some(mut request) = request else {
            conn.out.put_slice(BAD_REQUEST);
            let _ = conn.flush().await;
            return Served::Done;
        };
        let stamp = Stamp::of(request.headers());
        let mut answer = None;
        handle(state, &mut request, socket, &mut answer).await;
        let Some(response) = answer.as_mut() else {
            return Served::Done;
        };
        trade_out(&mut conn.out);
        let answered = conn
            .answer(state, &stamp, response, keep_alive, head_only)
            .await;
        trade_out(&mut conn.out);
        match answered {
            Ok(true) => {}
            Ok(false) => {
                let _ = conn.stream.shutdown().await;
                return Served::Done;
            }
            Err(_) => return Served::Done,
        }
    }
}

/// Polls `body` for its next bytes, written at the end of `out`; `line` gets the bytes of the
/// chunk-size line written in front of them (0 when none was).
fn poll_event(
    body: Pin<&mut MockBody>,
    cx: &mut Context<'_>,
    out: &mut BytesMut,
    chunked: bool,
    line: &mut usize,
) -> Poll<Option<Result<(), ResetOnPurpose>>> {
    let mut sink = Chunks::new(out, chunked);
    let step = body.poll_write(cx, &mut sink);
    *line = sink.line();
    step
}

/// The answer to a head whose target or a header hyper's types refuse.
const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

impl Conn {
    /// Reads until the buffer holds `whole` bytes, within `timeout`; why not, if it does not.
    async fn read_body(&mut self, whole: usize, timeout: Duration) -> Option<BodyError> {
        if self.buf.len() >= whole {
            return None;
        }
        self.buf.reserve(whole - self.buf.len());
        let due = Instant::now() + timeout;
        // A body being read is finished, shutdown or not.
        let mut never = pin!(std::future::pending::<()>());
        while self.buf.len() < whole {
            match self.read(due, never.as_mut()).await {
                Read::Bytes => {}
                Read::TimedOut => return Some(BodyError::TimedOut),
                Read::Eof | Read::Failed | Read::Stopped => return Some(BodyError::Read),
            }
        }
        None
    }

    /// Waits for more bytes until `due`, or until `stopped` is ready.
    async fn read<F: Future>(&mut self, due: Instant, mut stopped: Pin<&mut F>) -> Read {
        if self.buf.capacity() - self.buf.len() < 1024 {
            self.buf.reserve(READ_BUFFER);
        }
        if std::mem::take(&mut self.drained) {
            // Clears the readiness the reactor last reported, unless a newer event came in.
            let _ = self.stream.try_io(Interest::READABLE, || {
                Err::<(), _>(io::ErrorKind::WouldBlock.into())
            });
        }
        poll_fn(|cx| {
            if let Poll::Ready(read) = self.poll_read(cx) {
                return Poll::Ready(read);
            }
            if stopped.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Read::Stopped);
            }
            self.poll_due(cx, due)
        })
        .await
    }

    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Read> {
        loop {
            match self.stream.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {
                    let room = self.buf.capacity() - self.buf.len();
                    match self.stream.try_read_buf(&mut self.buf) {
                        Ok(0) => return Poll::Ready(Read::Eof),
                        Ok(n) => {
                            self.drained = n < room;
                            return Poll::Ready(Read::Bytes);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                        Err(_) => return Poll::Ready(Read::Failed),
                    }
                }
                Poll::Ready(Err(_)) => return Poll::Ready(Read::Failed),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Ready once `due` has passed. The timer keeps an earlier deadline it was armed at and is
    /// moved on when it fires before `due`.
    fn poll_due(&mut self, cx: &mut Context<'_>, due: Instant) -> Poll<Read> {
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if timer.deadline() > due {
            timer.as_mut().reset(due);
        }
        while timer.as_mut().poll(cx).is_ready() {
            if Instant::now() >= due {
                return Poll::Ready(Read::TimedOut);
            }
            timer.as_mut().reset(due);
        }
        Poll::Pending
    }

    /// Writes `response`. Returns whether the connection stays open. The answer is borrowed,
    /// not moved: it is 640 bytes, and each move copies all of them.
    async fn answer(
        &mut self,
        state: &State,
        stamp: &Stamp,
        response: &mut hyper::Response<crate::answer::body::MockBody>,
        keep_alive: bool,
        head_only: bool,
    ) -> io::Result<bool> {
        let status = response.status();
        let framing = encode::framing(status, response.body().size_hint().exact());
        let fixed = response.body().fixed_headers().map(|f| (&state.catalog, f));
        let keep_alive = encode::head(
            &mut self.out,
            status,
            fixed,
            |out| stamp.put(state, out),
            response.headers(),
            framing,
            keep_alive,
        );
        if head_only || framing == Framing::None {
            self.flush().await?;
            return Ok(keep_alive);
        }
        // Each event of a stream is a chunk of its own, as hyper sends it: framed as it is
        // written when it says its length first (`line`: its size line's bytes), else after.
        let chunked = framing == Framing::Chunked;
        let mut body = Pin::new(response.body_mut());
        loop {
            let mut open = self.out.len();
            let mut line = 0;
            let now = poll_fn(|cx| {
                Poll::Ready(poll_event(
                    body.as_mut(),
                    cx,
                    &mut self.out,
                    chunked,
                    &mut line,
                ))
            })
            .await;
            let step = match now {
                Poll::Ready(step) => step,
                // Not due yet: what is ready goes out now.
                Poll::Pending => {
                    self.flush().await?;
                    open = 0;
                    poll_fn(|cx| poll_event(body.as_mut(), cx, &mut self.out, chunked, &mut line))
                        .await
                }
            };
            match step {
                None => break,
                Some(Ok(())) => {}
                // A reset on purpose: the socket is set to reset when it closes.
                Some(Err(_)) => return Err(io::ErrorKind::ConnectionAborted.into()),
            }
            if line > 0 {
                encode::end_chunk(&mut self.out, open, line);
            } else if chunked {
                encode::close_chunk(&mut self.out, open);
            }
            if self.out.len() >= WRITE_AHEAD {
                self.flush().await?;
            }
        }
        if chunked {
            encode::last_chunk(&mut self.out);
        }
        self.flush().await?;
        Ok(keep_alive)
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.out).await?;
        self.out.clear();
        Ok(())
    }

    fn replay(self) -> Replay {
        let read: Bytes = self.buf.freeze();
        Replay::new(read, self.stream)
    }
}
