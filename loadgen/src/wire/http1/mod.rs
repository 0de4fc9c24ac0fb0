//! The generator's HTTP/1.1 client: one connection, one request at a time, driven by the task of
//! the request it carries.
//!
//! A general client (hyper's) runs each connection as its own task and hands requests, responses
//! and body frames across channels, which costs more CPU per request than the work itself here.
//! This client writes pre-encoded requests ([`RequestTemplate`]), parses response heads with
//! `httparse`, decodes `Content-Length`, chunked and read-until-close bodies, and stamps every
//! socket read, so a body's bytes are timed when they came off the socket.

mod chunked;
mod exchange;
pub(crate) mod head;
pub(crate) mod pool;
pub(crate) mod request;

use std::pin::Pin;
use std::task::{Context, Waker};

use gatebench_shared::clock::monotonic_ns;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, ReadBuf};

use crate::wire::transport::Stream;

use crate::wire::outcome::MockTimes;
pub use exchange::exchange;
pub use head::Framing;
pub use request::RequestTemplate;

/// Bytes read from the socket at a time; a response head must fit in it.
const READ_BUFFER: usize = 16 * 1024;

/// How an exchange on a connection failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The connection was reset, or closed before a response began.
    Reset,
    /// The connection closed inside a body with a declared end.
    Truncated,
    /// The bytes are not an HTTP/1.1 response.
    Invalid,
}

/// A response's status and framing, once its head has been read.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// The mock's timestamps, when it was asked for them.
    pub mock_times: Option<MockTimes>,
    framing: Framing,
    keep_alive: bool,
}

/// One client connection.
#[derive(Debug)]
pub struct Connection {
    stream: Stream,
    buf: Box<[u8]>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// The request being sent.
    out: Vec<u8>,
    /// When the last read returned bytes (`CLOCK_MONOTONIC` ns).
    last_read: Option<u64>,
    /// False once the connection cannot carry another request.
    reusable: bool,
}

impl Connection {
    pub fn new(stream: Stream) -> Connection {
        Connection {
            stream,
            // Filled with a non-zero byte so its pages are resident from the start (zeroed
            // memory would be mapped lazily and make RSS creep up as bursts reach connections
            // not used before); the content is never read before a read fills it.
            buf: vec![b' '; READ_BUFFER].into_boxed_slice(),
            start: 0,
            end: 0,
            out: Vec::new(),
            last_read: None,
            reusable: true,
        }
    }

    /// When bytes were last read off the socket (`CLOCK_MONOTONIC` ns).
    pub fn last_read(&self) -> Option<u64> {
        self.last_read
    }

    /// True when the connection can carry a request: the last response ended cleanly and the
    /// server has not closed (or sent anything on) the idle connection since.
    pub fn is_usable(&mut self) -> bool {
        if !self.reusable || self.start != self.end {
            return false;
        }
        // A read that would wait means nothing came: no end of stream, no stray bytes. It
        // reads nothing from the socket unless it is readable, and over TLS it takes in what
        // the server may send unasked (TLS 1.3 session tickets) without any plaintext.
        let mut cx = Context::from_waker(Waker::noop());
        let mut probe = ReadBuf::new(&mut self.buf[..]);
        Pin::new(&mut self.stream)
            .poll_read(&mut cx, &mut probe)
            .is_pending()
    }

    /// Sends the request `fill` writes into the connection's buffer.
    pub async fn send(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> Result<(), Failure> {
        fill(&mut self.out);
        let result = self.stream.write_all(&self.out).await;
        result.map_err(|_| {
            self.reusable = false;
            Failure::Reset
        })
    }

    /// Reads the head of the response (skipping interim 1xx responses).
    pub async fn read_head(&mut self) -> Result<Response, Failure> {
        loop {
            match head::parse_seen(&self.buf[self.start..self.end]) {
                Ok(Some((head, used))) => {
                    self.start += used;
                    if (100..200).contains(&head.status) && head.status != 101 {
                        continue;
                    }
                    return Ok(Response {
                        status: head.status,
                        mock_times: head.mock_times,
                        framing: head.framing,
                        keep_alive: head.keep_alive,
                    });
                }
                Ok(None) => {}
                Err(_) => return Err(self.fail(Failure::Invalid)),
            }
            if self.start == 0 && self.end == self.buf.len() {
                // A head larger than the buffer.
                return Err(self.fail(Failure::Invalid));
            }
            if !self.fill().await? {
                return Err(self.fail(Failure::Reset));
            }
        }
    }

    /// Reads the body of `response`, handing each piece to `on_data` with the time its bytes
    /// were read off the socket.
    pub async fn read_body(
        &mut self,
        response: Response,
        mut on_data: impl FnMut(&[u8], u64),
    ) -> Result<(), Failure> {
        let Response {
            framing,
            keep_alive,
            ..
        } = response;
        match framing {
            Framing::Empty => {}
            Framing::Length(mut left) => loop {
                let take = left.min((self.end - self.start) as u64) as usize;
                if take > 0 {
                    on_data(&self.buf[self.start..self.start + take], self.read_at());
                    self.start += take;
                    left -= take as u64;
                }
                if left == 0 {
                    break;
                }
                if !self.fill().await? {
                    return Err(self.fail(Failure::Truncated));
                }
            },
            Framing::Chunked(mut decoder) => loop {
                let at = self.read_at();
                let decoded =
                    decoder.decode(&self.buf[self.start..self.end], |data| on_data(data, at));
                match decoded {
                    Ok(used) => self.start += used,
                    Err(_) => return Err(self.fail(Failure::Invalid)),
                }
                if decoder.is_done() {
                    break;
                }
                if !self.fill().await? {
                    return Err(self.fail(Failure::Truncated));
                }
            },
            Framing::UntilClose => {
                self.reusable = false;
                loop {
                    if self.end > self.start {
                        on_data(&self.buf[self.start..self.end], self.read_at());
                        self.start = self.end;
                    }
                    if !self.fill().await? {
                        break;
                    }
                }
            }
        }
        if !keep_alive {
            self.reusable = false;
        }
        Ok(())
    }

    /// True when the connection can be given back after a complete exchange.
    pub fn is_reusable(&self) -> bool {
        self.reusable
    }

    fn read_at(&self) -> u64 {
        self.last_read.unwrap_or_else(monotonic_ns)
    }

    fn fail(&mut self, failure: Failure) -> Failure {
        self.reusable = false;
        failure
    }

    /// Reads more bytes into the buffer; false at the end of the stream.
    async fn fill(&mut self) -> Result<bool, Failure> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        match self.stream.read(&mut self.buf[self.end..]).await {
            Ok(0) => {
                self.reusable = false;
                Ok(false)
            }
            Ok(n) => {
                self.end += n;
                self.last_read = Some(monotonic_ns());
                Ok(true)
            }
            Err(_) => Err(self.fail(Failure::Reset)),
        }
    }
}
