//! An HTTP/2 connection's task: it writes the frames its requests and its state append, and
//! reads the server's frames into that state, each read timed once as it returns.

use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use gatebench_shared::clock::monotonic_ns;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::wire::http2::connection::Conn;
use crate::wire::http2::frame;
use crate::wire::outcome::ErrorKind;

/// Octets read at a time: four frames of the largest size the client allows, so that a
/// partial frame always fits after what came before it is moved out of the way.
const READ_BUFFER: usize = 4 * (frame::DEFAULT_MAX_FRAME + frame::HEADER_LEN);

/// Runs the connection over `io` until it ends: the server closes it or breaks the protocol,
/// or the socket fails. Its streams then fail with the reason ([`Conn::close`]).
pub(crate) async fn drive<T>(conn: Rc<RefCell<Conn>>, mut io: T)
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let mut input = vec![0u8; READ_BUFFER];
    let (mut start, mut end) = (0usize, 0usize);
    let mut output: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut written = 0usize;
    let mut flushed = true;
    // After a protocol error of the server's: its GOAWAY is written, then the task ends.
    let mut closing = false;
    poll_fn(|cx| loop {
        let mut progress = false;
        if written == output.len() {
            output.clear();
            written = 0;
            conn.borrow_mut().take_out(&mut output);
        }
        while written < output.len() {
            match Pin::new(&mut io).poll_write(cx, &output[written..]) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    written += n;
                    flushed = false;
                    progress = true;
                }
                Poll::Ready(_) => {
                    conn.borrow_mut().close(ErrorKind::Reset);
                    return Poll::Ready(());
                }
                Poll::Pending => break,
            }
        }
        if written == output.len() && !flushed {
            match Pin::new(&mut io).poll_flush(cx) {
                Poll::Ready(Ok(())) => flushed = true,
                Poll::Ready(Err(_)) => {
                    conn.borrow_mut().close(ErrorKind::Reset);
                    return Poll::Ready(());
                }
                Poll::Pending => {}
            }
        }
        // After a protocol error the GOAWAY got what one write could give it: a server that
        // reads nothing more holds up nothing.
        if closing {
            return Poll::Ready(());
        }
        if end == input.len() || (start > 0 && input.len() - end < frame::DEFAULT_MAX_FRAME) {
            input.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        let mut buf = ReadBuf::new(&mut input[end..]);
        match Pin::new(&mut io).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                let at = monotonic_ns();
                end += buf.filled().len();
                let mut state = conn.borrow_mut();
                match state.receive(&input[start..end], at) {
                    Ok(used) => {
                        start += used;
                        if start == end {
                            (start, end) = (0, 0);
                        }
                    }
                    Err(err) => {
                        state.fail(err);
                        closing = true;
                    }
                }
                progress = true;
            }
            Poll::Ready(_) => {
                // The server closed the connection, or the socket failed.
                conn.borrow_mut().close(ErrorKind::Reset);
                return Poll::Ready(());
            }
            Poll::Pending => {}
        }
        let mut state = conn.borrow_mut();
        // More to do now: bytes were moved, or frames wait while the socket takes them.
        let more = progress || (written == output.len() && !state.out.is_empty());
        if !more {
            state.set_driver(cx.waker());
            return Poll::Pending;
        }
    })
    .await
}
