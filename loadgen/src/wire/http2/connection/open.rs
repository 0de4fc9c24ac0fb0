//! A request's side of a connection: waiting for the server's stream limit in order, opening
//! its stream and sending its body as the windows allow, waiting for its outcome, or giving up.

use std::task::{Context, Poll};

use bytes::Bytes;

use super::{Conn, Failed, Remote, Stream, Waiter, STREAM_WINDOW};
use crate::wire::http2::frame::{self, code};
use crate::wire::outcome::Exchange;

impl Conn {
    /// Opens a stream for `pending` once the server's limit has room and no earlier request
    /// waits: its head (`block`) and as much of `body` as the windows allow are appended to
    /// the frames to write. Returns the stream's id.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn poll_open(
        &mut self,
        cx: &mut Context<'_>,
        ticket: &mut Option<u64>,
        block: &[&[u8]],
        body: &Bytes,
        pending: &mut Option<Exchange>,
        keep: bool,
        start_mono_ns: u64,
    ) -> Poll<Result<u32, Failed>> {
        if !self.accepts_streams() {
            // Never sent: the connection it waited for is gone or going.
            self.leave_queue(ticket);
            return Poll::Ready(Err(Failed::Unprocessed));
        }
        let first = match (*ticket, self.waiters.front()) {
            (_, None) => true,
            (Some(t), Some(w)) => w.ticket == t,
            (None, Some(_)) => false,
        };
        if !first || self.active >= self.peer.max_streams {
            match *ticket {
                Some(t) => {
                    if let Some(w) = self.waiters.iter_mut().find(|w| w.ticket == t) {
                        w.waker.clone_from(cx.waker());
                    }
                }
                None => {
                    let t = self.next_ticket;
                    self.next_ticket += 1;
                    *ticket = Some(t);
                    self.waiters.push_back(Waiter {
                        ticket: t,
                        waker: cx.waker().clone(),
                    });
                }
            }
            return Poll::Pending;
        }
        self.leave_queue(ticket);
        let id = self.next_id;
        self.next_id += 2;
        self.active += 1;
        frame::put_headers(
            &mut self.out,
            id,
            block,
            body.is_empty(),
            self.peer.max_frame,
        );
        self.streams.insert(
            id,
            Stream {
                pending: pending.take(),
                keep,
                reading: None,
                start_mono_ns,
                content_length: None,
                received: 0,
                body: body.clone(),
                sent: 0,
                ended_sending: body.is_empty(),
                send_window: self.peer.initial_window,
                recv_window: STREAM_WINDOW as i64,
                recv_unacked: 0,
                outcome: None,
                waker: None,
                remote: Remote::Open,
            },
        );
        if !body.is_empty() {
            // Behind the bodies that already wait for a window.
            self.blocked.push_back(id);
            self.send_blocked();
        }
        self.wake_driver();
        Poll::Ready(Ok(id))
    }

    /// Takes `ticket` out of the queue; the next in line may now be first.
    fn leave_queue(&mut self, ticket: &mut Option<u64>) {
        if let Some(t) = ticket.take() {
            let was_first = self.waiters.front().is_some_and(|w| w.ticket == t);
            self.waiters.retain(|w| w.ticket != t);
            if was_first {
                self.wake_first_waiter();
            }
        }
    }

    pub(super) fn wake_first_waiter(&mut self) {
        if let Some(w) = self.waiters.front() {
            w.waker.wake_by_ref();
        }
    }

    /// A request that no longer waits: it leaves the queue, and its stream, if it opened and
    /// has not ended, is reset (CANCEL).
    pub(crate) fn forget(&mut self, ticket: &mut Option<u64>, id: Option<u32>) {
        self.leave_queue(ticket);
        let Some(id) = id else { return };
        if let Some(stream) = self.streams.remove(&id) {
            if stream.outcome.is_none() {
                self.active -= 1;
                if self.ended.is_none() {
                    frame::put_rst_stream(&mut self.out, id, code::CANCEL);
                    self.wake_driver();
                }
                self.wake_first_waiter();
            }
        }
        // Its place in the connection's window may let another body go.
        self.send_blocked();
    }

    /// The outcome of stream `id`, once it is known.
    pub(crate) fn poll_outcome(
        &mut self,
        cx: &mut Context<'_>,
        id: u32,
    ) -> Poll<Result<Exchange, Failed>> {
        let lost = Err(Failed::Kind(crate::wire::outcome::ErrorKind::Reset));
        let Some(stream) = self.streams.get_mut(&id) else {
            return Poll::Ready(lost);
        };
        if stream.outcome.is_some() {
            let stream = self.streams.remove(&id);
            return Poll::Ready(stream.and_then(|s| s.outcome).unwrap_or(lost));
        }
        if !stream
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            stream.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Sends as much of stream `id`'s body as the windows allow; whether all of it is sent.
    fn send_body(&mut self, id: u32) -> bool {
        let Some(stream) = self.streams.get_mut(&id) else {
            return true;
        };
        while stream.sent < stream.body.len() {
            let window = self.send_window.min(stream.send_window).max(0) as usize;
            let n = (stream.body.len() - stream.sent)
                .min(self.peer.max_frame)
                .min(window);
            if n == 0 {
                return false;
            }
            let end = stream.sent + n == stream.body.len();
            frame::put_data(
                &mut self.out,
                id,
                &stream.body[stream.sent..stream.sent + n],
                end,
            );
            stream.sent += n;
            stream.send_window -= n as i64;
            self.send_window -= n as i64;
            stream.ended_sending = end;
        }
        true
    }

    /// Sends what the windows now allow of the bodies that wait for them, in order: a body
    /// held by its own stream's window lets the next ones go.
    pub(super) fn send_blocked(&mut self) {
        let mut i = 0;
        while i < self.blocked.len() && self.send_window > 0 {
            if self.send_body(self.blocked[i]) {
                self.blocked.remove(i);
            } else {
                i += 1;
            }
        }
    }
}
