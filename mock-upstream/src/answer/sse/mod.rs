//! A streamed answer: pre-encoded SSE events yielded on absolute deadlines.
//!
//! The stream is the response body itself: no task and no channel per stream. A chat completion
//! sends `role, token 0, token 1 … token n−1, finish, [usage], [DONE]`; an Anthropic message
//! `message_start, content_block_start, ping, delta 0 … delta n−1, content_block_stop,
//! message_delta, message_stop`. The first event and token 0 (with whatever lies between) are
//! due at `start + ttft`, token k at the deadline of token k−1 plus a drawn inter-token gap, and
//! the closing events leave right behind the last token, so hyper writes them with the chunked
//! terminator in one flush. Deadlines are absolute, so timer lateness never accumulates; each
//! wait's lateness (actual − scheduled) is recorded as the mock's emission error.
//!
//! - `plan`: what a stream sends ([`StreamPlan`], [`StreamApi`]) and each API's events.
//! - `fault`: what a stream sends instead at the event where its fault strikes.

mod fault;
mod plan;

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use gatebench_shared::RequestDraw;
use pin_project_lite::pin_project;

pub use plan::{StreamApi, StreamPlan};

use crate::answer::peer::PeerWatch;
use crate::catalog::payload::{Chunks, Frames, Payload, Sink};
use crate::state::State;
use crate::timing::timer::Alarm;
use fault::Broken;

/// A mid-stream reset on purpose: the body fails, so hyper drops the connection (HTTP/1, with
/// `SO_LINGER` 0 set first, so the close is a TCP RST) or resets the stream (HTTP/2).
#[derive(Debug, thiserror::Error)]
#[error("stream reset on purpose (x-mock-fault or --fault)")]
pub struct ResetOnPurpose;

/// Counts a stream as open for as long as its body lives, and its bytes when it ends (one
/// shared counter update per stream, not per event).
#[derive(Debug)]
struct OpenStream(Arc<State>, usize);

impl OpenStream {
    fn new(state: Arc<State>) -> OpenStream {
        state.metrics.stream_opened();
        OpenStream(state, 0)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.metrics.stream_closed();
        self.0.metrics.bytes_out(self.1);
    }
}

pin_project! {
    /// The body of a streamed chat completion.
    #[derive(Debug)]
    pub struct SseStream {
        open: OpenStream,
        plan: StreamPlan,
        draw: RequestDraw,
        // Index of the next event to send.
        next: u32,
        // Deadline of the next timed event (`CLOCK_MONOTONIC` ns); `None` when the model adds
        // no latency.
        due: Option<u64>,
        alarm: Alarm,
        // The second frame of an event too large for one, sent next (hyper's path only, the
        // Responses API's last event). Boxed: inline, it would make every stream and every
        // whole answer (`MockBody` holds either) 500 bytes larger, and each is moved several
        // times on its way to the socket.
        overflow: Option<Box<Payload>>,
        // True once a reset has yielded, so hyper flushed the events before it.
        reset_armed: bool,
        // While a stall holds the stream: the watch on its client (boxed: rare).
        stall: Option<Box<PeerWatch>>,
        layout: Layout,
    }
}

/// How many events a stream sends and which of them carry its tokens.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    pub(super) events: u32,
    /// The event that carries token 0.
    pub(super) first: u32,
    pub(super) tokens: u32,
}

impl Layout {
    /// Events that wait for their deadline: the first (time to first token) and every token
    /// after the first (inter-token gap). The rest leave with the event before them.
    fn waits(self, event: u32) -> bool {
        event == 0 || (self.first + 1..self.first + self.tokens).contains(&event)
    }

    /// True when the event after `event` is a token due one inter-token gap later.
    fn advances(self, event: u32) -> bool {
        (self.first..(self.first + self.tokens).saturating_sub(1)).contains(&event)
    }
}

impl SseStream {
    /// A stream for `plan`, timed from `start` (`None` when the latency model adds nothing).
    pub fn new(
        state: Arc<State>,
        plan: StreamPlan,
        mut draw: RequestDraw,
        start: Option<u64>,
    ) -> Self {
        let due = start.map(|start| start + draw.ttft_us() * 1000);
        let layout = plan.layout();
        if let Some(fault) = plan.fault.filter(|f| f.at < layout.events) {
            state.metrics.stream_fault(fault.kind);
        }
        SseStream {
            layout,
            open: OpenStream::new(state),
            plan,
            draw,
            next: 0,
            due,
            alarm: Alarm::default(),
            overflow: None,
            reset_armed: false,
            stall: None,
        }
    }

    /// True when a mid-stream fault is to break it (one within its events).
    pub fn breaks(&self) -> bool {
        self.plan.fault.is_some_and(|f| f.at < self.layout.events)
    }

    /// True once every event has been yielded.
    pub fn is_done(&self) -> bool {
        self.next >= self.layout.events && self.overflow.is_none()
    }
}

/// What a poll of a stream gives.
enum Step {
    /// Event `n` is due: encode it.
    Event(u32),
    /// The next event is not due yet.
    Pending,
    /// Every event has been sent.
    End,
    /// What a fault sends instead (boxed: rare, and a payload is large).
    Fault(Box<Poll<Option<Result<Payload, ResetOnPurpose>>>>),
}

impl SseStream {
    /// Moves the stream on to its next event once that is due.
    #[inline(always)]
    fn step(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Step {
        let event = self.next;
        let this = self.project();
        let layout = *this.layout;
        if event >= layout.events {
            return Step::End;
        }
        if let Some(fault) = this.plan.fault.filter(|f| f.at == event) {
            let broken = Broken {
                plan: this.plan,
                state: &this.open.0,
                next: this.next,
                reset_armed: this.reset_armed,
                stall: this.stall,
            };
            return Step::Fault(Box::new(broken.frame(fault.kind, event, cx)));
        }
        if let (Some(due), true) = (*this.due, layout.waits(event)) {
            let Poll::Ready(now) = this.alarm.poll_at(due, cx) else {
                return Step::Pending;
            };
            let metrics = &this.open.0.metrics;
            metrics.emission_error.record((now - due) / 1000);
        }
        // Token k's successor is due one inter-token gap after token k.
        if let Some(due) = this.due.as_mut() {
            if layout.advances(event) {
                *due += this.draw.itl_us() * 1000;
            }
        }
        *this.next += 1;
        Step::Event(event)
    }

    /// Appends the next event to `out` once it is due: the own HTTP/1.1 server's path, which
    /// fills the event's template straight into its write buffer.
    pub fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut Chunks<'_>,
    ) -> Poll<Option<Result<(), ResetOnPurpose>>> {
        match self.as_mut().step(cx) {
            Step::Event(event) => {
                let this = self.project();
                let before = out.out.len();
                this.plan.encode(&this.open.0, event, out);
                this.open.1 += out.out.len() - before - out.line();
                Poll::Ready(Some(Ok(())))
            }
            Step::Pending => Poll::Pending,
            Step::End => Poll::Ready(None),
            Step::Fault(poll) => poll.map(|end| end.map(|sent| sent.map(|p| out.put_payload(p)))),
        }
    }
}

impl http_body::Body for SseStream {
    type Data = Payload;
    type Error = ResetOnPurpose;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Payload>, Self::Error>>> {
        if let Some(rest) = self.as_mut().project().overflow.take() {
            return Poll::Ready(Some(Ok(http_body::Frame::data(*rest))));
        }
        match self.as_mut().step(cx) {
            Step::Event(event) => {
                let this = self.project();
                let mut frames = Frames::default();
                this.plan.encode(&this.open.0, event, &mut frames);
                this.open.1 += frames.first.len() + frames.second.as_ref().map_or(0, Payload::len);
                *this.overflow = frames.second.map(Box::new);
                Poll::Ready(Some(Ok(http_body::Frame::data(frames.first))))
            }
            Step::Pending => Poll::Pending,
            Step::End => Poll::Ready(None),
            Step::Fault(poll) => poll.map(|end| end.map(|sent| sent.map(http_body::Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.is_done()
    }
}
