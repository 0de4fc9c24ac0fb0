//! A stream at the event where its fault strikes (`x-mock-fault: KIND@K`, `--fault`): the
//! provider's error event, a clean close, half an event, a stall or a reset.

use std::os::fd::RawFd;
use std::task::{Context, Poll};

use bytes::BytesMut;

use super::{ResetOnPurpose, StreamPlan};
use crate::answer::peer::PeerWatch;
use crate::catalog::payload::Payload;
use crate::config::StreamFaultKind;
use crate::state::State;

/// A stream at the event where its fault strikes: what it sends instead.
pub(super) struct Broken<'a> {
    pub(super) plan: &'a StreamPlan,
    pub(super) state: &'a State,
    pub(super) next: &'a mut u32,
    pub(super) reset_armed: &'a mut bool,
    pub(super) stall: &'a mut Option<Box<PeerWatch>>,
}

impl Broken<'_> {
    /// Kept out of line and cold, so the poll of every healthy event stays small.
    #[cold]
    #[inline(never)]
    pub(super) fn frame(
        self,
        kind: StreamFaultKind,
        event: u32,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Payload, ResetOnPurpose>>> {
        let done = self.plan.events();
        match kind {
            StreamFaultKind::Reset if !*self.reset_armed => {
                // hyper flushes what it holds when the body is pending; the reset must not
                // discard the events before it.
                *self.reset_armed = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            StreamFaultKind::Reset => {
                *self.next = done;
                if let Some(socket) = self.plan.socket {
                    linger_zero(socket);
                }
                Poll::Ready(Some(Err(ResetOnPurpose)))
            }
            // Nothing more is sent, for as long as the client stays: once it leaves, the body
            // fails, so the connection closes and the stream is freed.
            StreamFaultKind::Stall => self.stall(done, cx),
            StreamFaultKind::Close => {
                *self.next = done;
                Poll::Ready(None)
            }
            StreamFaultKind::Truncate => {
                let mut whole = BytesMut::new();
                self.plan.encode(self.state, event, &mut whole);
                *self.next = done;
                let mut half = Payload::new();
                let half_len = whole.len() / 2;
                half.push_bytes(&whole.freeze().slice(..half_len));
                Poll::Ready(Some(Ok(half)))
            }
            StreamFaultKind::Error => {
                *self.next = done;
                let mut error = Payload::new();
                self.plan.encode_error(self.state, event, &mut error);
                Poll::Ready(Some(Ok(error)))
            }
        }
    }

    /// A stall: pending until the client leaves (`done` events then count as sent), watched
    /// on the socket; over HTTP/2, the client's reset or the connection's end drops the stream.
    fn stall(
        self,
        done: u32,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Payload, ResetOnPurpose>>> {
        let Some(socket) = self.plan.socket else {
            return Poll::Pending;
        };
        if self.stall.is_none() {
            *self.stall = PeerWatch::new(socket).map(Box::new);
        }
        match self.stall.as_ref().map(|watch| watch.poll_gone(cx)) {
            Some(Poll::Ready(())) => {
                *self.next = done;
                Poll::Ready(Some(Err(ResetOnPurpose)))
            }
            _ => Poll::Pending,
        }
    }
}

/// Makes the socket's close send RST and drop unsent data.
fn linger_zero(socket: RawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `socket` is the descriptor of the connection this body is being sent on, which
    // lives as long as the body; the option value is a valid `linger` of the size given.
    unsafe {
        libc::setsockopt(
            socket,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            std::ptr::from_ref(&linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
