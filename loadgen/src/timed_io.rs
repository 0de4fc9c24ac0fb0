//! A TCP stream that notes when it last read bytes off the socket.
//!
//! A response's completion is the moment its last bytes were read, not the moment its task got
//! to run: when hundreds of responses arrive at once, the tasks behind them run one after
//! another, and timing them by task would add that queue to every measurement.

use std::cell::Cell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// When a connection last read bytes, shared between its stream and the requests it carries.
pub type LastRead = Rc<Cell<Option<quanta::Instant>>>;

/// A `TcpStream` that stamps every read that returned bytes.
#[derive(Debug)]
pub struct TimedStream {
    inner: TcpStream,
    clock: quanta::Clock,
    last_read: LastRead,
}

impl TimedStream {
    pub fn new(inner: TcpStream, clock: quanta::Clock) -> (TimedStream, LastRead) {
        let last_read = LastRead::default();
        let stream = TimedStream {
            inner,
            clock,
            last_read: last_read.clone(),
        };
        (stream, last_read)
    }
}

impl AsyncRead for TimedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            let now = self.clock.now();
            self.last_read.set(Some(now));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
