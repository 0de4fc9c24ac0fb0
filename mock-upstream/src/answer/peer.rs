//! Noticing that a connection's client went away while nothing is being sent to it. A stream
//! that stalls on purpose writes nothing, so no failed write would ever tell; the client's FIN
//! (or a reset) is seen instead, through the reactor, without reading a byte of what the
//! connection may still hold (a pipelined request stays the connection's to read).

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::task::{Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A watch on one connection's socket, through a duplicate of its descriptor registered with
/// the worker's reactor (the connection's own registration is left alone).
#[derive(Debug)]
pub struct PeerWatch(AsyncFd<OwnedFd>);

impl PeerWatch {
    /// A watch on `socket`, or `None` when it cannot be set up (then the stream waits as
    /// before: until the send timeout or shutdown).
    pub fn new(socket: RawFd) -> Option<PeerWatch> {
        // SAFETY: `socket` is the descriptor of the connection the stream is sent on, open for
        // as long as the stream; `F_DUPFD_CLOEXEC` returns a new descriptor that we own.
        let dup = unsafe { libc::fcntl(socket, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return None;
        }
        // SAFETY: `dup` is a fresh descriptor owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(dup) };
        // SAFETY: `fd` is valid and open, and the `AsyncFd` owns it (so it stays the same
        // descriptor) until the watch is dropped. The stream is polled inside a worker's
        // runtime, whose reactor it registers with.
        unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .ok()
            .map(PeerWatch)
    }

    /// Ready once the client has shut its side or the connection has failed.
    pub fn poll_gone(&self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match self.0.poll_read_ready(cx) {
                Poll::Ready(Ok(mut guard)) => {
                    let ready = guard.ready();
                    if ready.is_read_closed() || ready.is_error() {
                        return Poll::Ready(());
                    }
                    // Bytes to read, not an end: they are the connection's, not ours.
                    guard.clear_ready();
                }
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
