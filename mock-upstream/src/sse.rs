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

use std::os::fd::RawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use gatebench_shared::wire::anthropic::StopReason;
use gatebench_shared::wire::bedrock::StopReason as BedrockStop;
use gatebench_shared::wire::gemini::FinishReason as GeminiFinish;
use gatebench_shared::wire::openai::FinishReason;
use gatebench_shared::RequestDraw;
use pin_project_lite::pin_project;

use crate::catalog::{Dialect, EventText, Outcome, UsageKey};
use crate::config::{StreamFault, StreamFaultKind};
use crate::payload::{Frames, Payload, Sink};
use crate::peer::PeerWatch;
use crate::state::State;
use crate::template::Fill;
use crate::timer::Alarm;
use crate::tools::ToolAnswer;

/// What one stream sends, decided when the request arrives.
#[derive(Debug)]
pub struct StreamPlan {
    pub model: Bytes,
    pub tokens: u32,
    pub prompt_tokens: u64,
    pub api: StreamApi,
    /// A fault asked for with `x-mock-fault` or drawn from the `--fault` rates.
    pub fault: Option<StreamFault>,
    /// The HTTP/1 connection's socket, which a reset closes with RST (`None` on HTTP/2).
    pub socket: Option<RawFd>,
    /// A tool call instead of text (`--tool-calls`; chat and messages streams).
    pub tool: Option<Box<ToolAnswer>>,
}

/// A mid-stream reset on purpose: the body fails, so hyper drops the connection (HTTP/1, with
/// `SO_LINGER` 0 set first, so the close is a TCP RST) or resets the stream (HTTP/2).
#[derive(Debug, thiserror::Error)]
#[error("stream reset on purpose (x-mock-fault or --fault)")]
pub struct ResetOnPurpose;

/// The API whose events a stream sends.
#[derive(Debug, Clone)]
pub enum StreamApi {
    /// OpenAI chat completion chunks.
    Chat {
        finish: FinishReason,
        include_usage: bool,
    },
    /// Azure OpenAI's: its prompt verdict first, then the chunks with their verdicts (a variant
    /// of its own, so OpenAI's chunks pay nothing for it).
    AzureChat {
        finish: FinishReason,
        include_usage: bool,
    },
    /// Anthropic Messages API events.
    Messages { stop: StopReason },
    /// OpenAI Responses API events; `echo` fills the response object's echoed parameters
    /// (boxed: every stream moves this a few times, and the other APIs' variants are small).
    Responses { outcome: Outcome, echo: Box<Bytes> },
    /// OpenAI legacy completion chunks.
    Completions {
        finish: FinishReason,
        include_usage: bool,
    },
    /// Gemini's partial responses: one per token, the last with the finish reason and usage.
    Gemini { finish: GeminiFinish },
    /// Bedrock's event stream: `messageStart`, a `contentBlockDelta` per token,
    /// `contentBlockStop`, `messageStop`, `metadata`.
    Bedrock { stop: BedrockStop },
}

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
        // The second frame of an event too large for one, sent next.
        overflow: Option<Payload>,
        // True once a reset has yielded, so hyper flushed the events before it.
        reset_armed: bool,
        // While a stall holds the stream: the watch on its client (boxed: rare).
        stall: Option<Box<PeerWatch>>,
        layout: Layout,
    }
}

/// How many events a stream sends and which of them carry its tokens.
#[derive(Debug, Clone, Copy)]
struct Layout {
    events: u32,
    /// The event that carries token 0.
    first: u32,
    tokens: u32,
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

    /// True once every event has been yielded.
    pub fn is_done(&self) -> bool {
        self.next >= self.layout.events && self.overflow.is_none()
    }
}

impl StreamPlan {
    /// Appends the provider's in-stream error event, sent in place of event `event`.
    fn encode_error<S: Sink>(&self, state: &State, event: u32, sink: &mut S) {
        let error: &'static [u8] = match &self.api {
            StreamApi::Chat { .. } | StreamApi::AzureChat { .. } | StreamApi::Completions { .. } => {
                b"data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n"
            }
            StreamApi::Messages { .. } => {
                b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
            }
            StreamApi::Gemini { .. } => {
                b"data: {\"error\":{\"code\":500,\"message\":\"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting\",\"status\":\"INTERNAL\"}}\r\n\r\n"
            }
            StreamApi::Bedrock { .. } => {
                sink.put(state.catalog.bedrock.error());
                return;
            }
            StreamApi::Responses { echo, .. } => {
                let fill = Fill {
                    model: &self.model,
                    content: &Bytes::new(),
                    prompt_tokens: self.prompt_tokens,
                    completion_tokens: 0,
                    sequence: u64::from(event),
                    echo,
                };
                state.catalog.responses.failed().fill_into(sink, &fill);
                return;
            }
        };
        sink.put(&Bytes::from_static(error));
    }

    /// The event that carries token 0.
    fn first_token_event(&self) -> u32 {
        match self.api {
            StreamApi::Chat { .. } => 1,
            StreamApi::AzureChat { .. } => 2,
            StreamApi::Messages { .. } => 3,
            // A function call has no content part.
            StreamApi::Responses { .. } if self.tool.is_some() => 3,
            StreamApi::Responses { .. } => 4,
            StreamApi::Completions { .. } | StreamApi::Gemini { .. } => 0,
            StreamApi::Bedrock { .. } => 1,
        }
    }

    fn events(&self) -> u32 {
        match self.api {
            StreamApi::Chat { include_usage, .. } => self.tokens + 3 + u32::from(include_usage),
            StreamApi::AzureChat { include_usage, .. } => {
                self.tokens + 4 + u32::from(include_usage)
            }
            StreamApi::Messages { .. } => self.tokens + 6,
            StreamApi::Responses { .. } if self.tool.is_some() => self.tokens + 6,
            StreamApi::Responses { .. } => self.tokens + 8,
            StreamApi::Completions { include_usage, .. } => {
                self.tokens + 2 + u32::from(include_usage)
            }
            // The last token's event carries the finish (an empty answer sends it alone).
            StreamApi::Gemini { .. } => self.tokens.max(1),
            StreamApi::Bedrock { .. } => self.tokens + 4,
        }
    }

    /// Where this stream's tokens lie among its events, worked out once per stream.
    fn layout(&self) -> Layout {
        Layout {
            events: self.events(),
            first: self.first_token_event(),
            tokens: self.tokens,
        }
    }

    /// Appends event `event` of this stream to `sink`.
    fn encode<S: Sink>(&self, state: &State, event: u32, sink: &mut S) {
        if let Some(tool) = &self.tool {
            if let Some(payload) = self.encode_tool(tool, state, event) {
                sink.put_payload(payload);
                return;
            }
        }
        match self.api {
            StreamApi::Chat {
                finish,
                include_usage,
            } => self.encode_chat(state, event, finish, include_usage, Dialect::OpenAi, sink),
            // Azure's choiceless first chunk, then the chunks as OpenAI's.
            StreamApi::AzureChat { .. } if event == 0 => {
                sink.put(state.catalog.chat(Dialect::Azure).prompt_filter())
            }
            StreamApi::AzureChat {
                finish,
                include_usage,
            } => self.encode_chat(
                state,
                event - 1,
                finish,
                include_usage,
                Dialect::Azure,
                sink,
            ),
            StreamApi::Messages { stop } => self.encode_messages(state, event, stop, sink),
            StreamApi::Responses { outcome, ref echo } => {
                self.encode_responses(state, event, outcome, echo, sink)
            }
            StreamApi::Completions {
                finish,
                include_usage,
            } => self.encode_completions(state, event, finish, include_usage, sink),
            StreamApi::Gemini { finish } => self.encode_gemini(state, event, finish, sink),
            StreamApi::Bedrock { stop } => self.encode_bedrock(state, event, stop, sink),
        }
    }

    /// Event `event` of a tool-call stream where it differs from a text stream (kept out of
    /// line: the opt-in path).
    #[cold]
    #[inline(never)]
    fn encode_tool(&self, tool: &ToolAnswer, state: &State, event: u32) -> Option<Payload> {
        match &self.api {
            StreamApi::Chat { include_usage, .. } => {
                tool.openai_chunk(state, event, *include_usage)
            }
            // Azure's first chunk is its prompt verdict; the call's chunks follow it.
            StreamApi::AzureChat { .. } if event == 0 => None,
            StreamApi::AzureChat { include_usage, .. } => {
                tool.openai_chunk(state, event - 1, *include_usage)
            }
            StreamApi::Messages { .. } => tool.anthropic_event(state, event),
            StreamApi::Responses { outcome, echo } => {
                Some(tool.responses_event(state, event, *outcome, echo))
            }
            StreamApi::Completions { .. }
            | StreamApi::Gemini { .. }
            | StreamApi::Bedrock { .. } => None,
        }
    }

    /// Every event pre-encoded and framed but the last, whose usage is this stream's.
    fn encode_bedrock<S: Sink>(&self, state: &State, event: u32, stop: BedrockStop, sink: &mut S) {
        let catalog = &state.catalog.bedrock;
        let n = self.tokens;
        match event {
            0 => sink.put(catalog.message_start()),
            e if e <= n => sink.put(catalog.delta(e - 1)),
            e if e == n + 1 => sink.put(catalog.block_stop()),
            e if e == n + 2 => sink.put(catalog.message_stop(stop)),
            _ => sink.put(&catalog.metadata(self.prompt_tokens, u64::from(n))),
        }
    }

    /// One partial response per token; the last with the finish reason and the usage.
    fn encode_gemini<S: Sink>(
        &self,
        state: &State,
        event: u32,
        finish: GeminiFinish,
        sink: &mut S,
    ) {
        let catalog = &state.catalog.gemini;
        let empty = Bytes::new();
        let fill = Fill {
            model: &self.model,
            content: if self.tokens == 0 {
                &empty
            } else {
                state.catalog.token(event)
            },
            prompt_tokens: self.prompt_tokens,
            completion_tokens: u64::from(self.tokens),
            sequence: u64::from(event),
            echo: &empty,
        };
        if event + 1 >= self.tokens {
            catalog.last_chunk(finish).fill_into(sink, &fill);
        } else {
            catalog.chunk().fill_into(sink, &fill);
        }
    }

    /// Token chunks, the finish chunk, the usage chunk if asked, `[DONE]`.
    fn encode_completions<S: Sink>(
        &self,
        state: &State,
        event: u32,
        finish: FinishReason,
        include_usage: bool,
        sink: &mut S,
    ) {
        let catalog = &state.catalog.completions;
        let usage = if include_usage {
            UsageKey::Null
        } else {
            UsageKey::Absent
        };
        let empty = Bytes::new();
        let mut fill = Fill {
            model: &self.model,
            content: &empty,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: u64::from(self.tokens),
            sequence: u64::from(event),
            echo: &empty,
        };
        let n = self.tokens;
        match event {
            e if e < n => {
                fill.content = state.catalog.token(e);
                catalog.chunk_text(usage).fill_into(sink, &fill)
            }
            e if e == n => catalog.chunk_finish(finish, usage).fill_into(sink, &fill),
            e if e == n + 1 && include_usage => catalog.chunk_usage().fill_into(sink, &fill),
            _ => sink.put(state.catalog.done()),
        }
    }

    fn encode_responses<S: Sink>(
        &self,
        state: &State,
        event: u32,
        outcome: Outcome,
        echo: &Bytes,
        sink: &mut S,
    ) {
        let (template, text) = state.catalog.responses.event(event, self.tokens, outcome);
        let whole;
        let empty = Bytes::new();
        let content = match text {
            EventText::None => &empty,
            EventText::Token(k) => state.catalog.token(k),
            EventText::Whole => {
                whole = state.catalog.content(self.tokens);
                &whole
            }
        };
        let fill = Fill {
            model: &self.model,
            content,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: u64::from(self.tokens),
            sequence: u64::from(event),
            echo,
        };
        template.fill_into(sink, &fill);
    }

    fn encode_messages<S: Sink>(&self, state: &State, event: u32, stop: StopReason, sink: &mut S) {
        let catalog = &state.catalog.anthropic;
        let empty = Bytes::new();
        let mut fill = Fill {
            model: &self.model,
            content: &empty,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: u64::from(self.tokens),
            sequence: u64::from(event),
            echo: &empty,
        };
        let n = self.tokens;
        match event {
            0 => catalog.message_start().fill_into(sink, &fill),
            1 => sink.put(catalog.block_start()),
            2 => sink.put(catalog.ping()),
            e if e < 3 + n => {
                fill.content = state.catalog.token(e - 3);
                catalog.delta().fill_into(sink, &fill)
            }
            e if e == 3 + n => sink.put(catalog.block_stop()),
            e if e == 4 + n => catalog.message_delta(stop).fill_into(sink, &fill),
            _ => sink.put(catalog.message_stop()),
        }
    }

    #[inline(always)]
    fn encode_chat<S: Sink>(
        &self,
        state: &State,
        event: u32,
        finish: FinishReason,
        include_usage: bool,
        dialect: Dialect,
        sink: &mut S,
    ) {
        let catalog = state.catalog.chat(dialect);
        let usage = if include_usage {
            UsageKey::Null
        } else {
            UsageKey::Absent
        };
        let empty = Bytes::new();
        let mut fill = Fill {
            model: &self.model,
            content: &empty,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: u64::from(self.tokens),
            sequence: u64::from(event),
            echo: &empty,
        };
        let n = self.tokens;
        match event {
            0 => catalog.chunk_role(usage).fill_into(sink, &fill),
            e if e <= n => {
                fill.content = state.catalog.token(e - 1);
                catalog.chunk_content(usage).fill_into(sink, &fill)
            }
            e if e == n + 1 => catalog.chunk_finish(finish, usage).fill_into(sink, &fill),
            e if e == n + 2 && include_usage => catalog.chunk_usage().fill_into(sink, &fill),
            _ => sink.put(state.catalog.done()),
        }
    }
}

/// A stream at the event where its fault strikes: what it sends instead.
struct Broken<'a> {
    plan: &'a StreamPlan,
    state: &'a State,
    next: &'a mut u32,
    reset_armed: &'a mut bool,
    stall: &'a mut Option<Box<PeerWatch>>,
}

impl Broken<'_> {
    /// Kept out of line and cold, so the poll of every healthy event stays small.
    #[cold]
    #[inline(never)]
    fn frame(
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
            StreamFaultKind::Stall => {
                let Some(socket) = self.plan.socket else {
                    // HTTP/2: the client's reset or the connection's end drops the stream.
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
        out: &mut BytesMut,
    ) -> Poll<Option<Result<(), ResetOnPurpose>>> {
        match self.as_mut().step(cx) {
            Step::Event(event) => {
                let this = self.project();
                let before = out.len();
                this.plan.encode(&this.open.0, event, out);
                this.open.1 += out.len() - before;
                Poll::Ready(Some(Ok(())))
            }
            Step::Pending => Poll::Pending,
            Step::End => Poll::Ready(None),
            Step::Fault(poll) => poll.map(|end| end.map(|sent| sent.map(|p| p.copy_to(out)))),
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
            return Poll::Ready(Some(Ok(http_body::Frame::data(rest))));
        }
        match self.as_mut().step(cx) {
            Step::Event(event) => {
                let this = self.project();
                let mut frames = Frames::default();
                this.plan.encode(&this.open.0, event, &mut frames);
                this.open.1 += frames.first.len() + frames.second.as_ref().map_or(0, Payload::len);
                *this.overflow = frames.second;
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
