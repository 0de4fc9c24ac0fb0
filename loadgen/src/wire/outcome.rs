//! What one exchange gives: its timings (`Exchange`), or why it failed (`ErrorKind`), and what
//! the request carried (`Tag`) for the breakdowns by class and stage.

/// Why a request failed. Failures are data: each is counted by kind, never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// The target refused the connection.
    ConnectRefused,
    /// Connecting took longer than the request timeout.
    ConnectTimeout,
    /// Connecting failed another way.
    Connect,
    /// The TLS handshake failed (an untrusted certificate, a name it does not cover, no
    /// protocol both sides speak).
    Tls,
    /// The connection was reset or closed before the response ended.
    Reset,
    /// No complete response within the request timeout.
    Timeout,
    /// A status other than 200.
    Status(u16),
    /// A stream that ended without its end marker or inside an event, or a body that ended
    /// before its declared length.
    Truncated,
    /// A body that is not what the API sends (not JSON, an error event, wrong counts).
    Invalid,
    /// Still in flight when the grace after the end of sending ran out (`--grace`, or a
    /// second Ctrl-C).
    Cancelled,
    /// Not sent: the open loop already held `--max-pending` requests waiting (the target not
    /// answering them), so this one was counted instead of queued.
    Backlog,
}

impl ErrorKind {
    /// The key of this kind in results (`connect_refused`, `status_503`, …).
    pub fn key(self) -> String {
        match self {
            ErrorKind::ConnectRefused => "connect_refused".into(),
            ErrorKind::ConnectTimeout => "connect_timeout".into(),
            ErrorKind::Connect => "connect_error".into(),
            ErrorKind::Tls => "tls_error".into(),
            ErrorKind::Reset => "reset".into(),
            ErrorKind::Timeout => "timeout".into(),
            ErrorKind::Status(code) => format!("status_{code}"),
            ErrorKind::Truncated => "truncated".into(),
            ErrorKind::Invalid => "invalid".into(),
            ErrorKind::Cancelled => "cancelled".into(),
            ErrorKind::Backlog => "backlog".into(),
        }
    }
}

/// When the mock received a request and started its answer (`CLOCK_MONOTONIC` ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockTimes {
    pub received_ns: u64,
    pub started_ns: u64,
}

/// Timing of one successful exchange, in nanoseconds from the start of the run.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    pub due_ns: u64,
    pub dispatched_ns: u64,
    pub sent_ns: u64,
    /// Of the time from dispatch to send, what the target caused (see `pool::Lease`).
    pub target_wait_ns: u64,
    pub done_ns: u64,
    pub first_byte_ns: Option<u64>,
    pub first_output_ns: Option<u64>,
    /// Arrival of each output event after the first, for ITL.
    pub output_gaps_ns: Vec<u64>,
    pub output_events: u64,
    pub usage_tokens: Option<u64>,
    pub stream: bool,
    /// The mock's timestamps, when asked for (`x-mock-timestamps`).
    pub mock_times: Option<MockTimes>,
    /// The request's class and size, for the breakdown.
    pub tag: Tag,
    /// What a session's turn keeps of its answer (boxed: single requests carry one pointer).
    pub kept: Option<Box<Kept>>,
    /// A session's request: when its building began and ended.
    pub build: Option<Build>,
}

/// When a session's request was built: from the end of the answer before it on its line (or
/// when the line's task began) to its body being ready. It could not leave before `ready_ns`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Build {
    pub from_ns: u64,
    pub ready_ns: u64,
}

impl Build {
    /// What of the building came after `due_ns`: 0 for a body ready before it.
    pub fn after_due(&self, due_ns: u64) -> u64 {
        self.ready_ns.saturating_sub(self.from_ns.max(due_ns))
    }
}

/// A kept answer: its body, and the prompt cache as the upstream reported it.
///
/// A stream's OpenAI chat chunks are read as they arrive, in the pass that times them: their
/// text and tool calls are here, and only the stream's other events are in `answer`.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    /// The answer's body: a whole body, or a stream's events not read as chat chunks (as they
    /// came, or AWS's binary event stream as it came).
    pub answer: Vec<u8>,
    /// The text of a stream's chat chunks, joined.
    pub text: String,
    /// The data of a stream's chat chunks that carry a usage, one `data:` line each.
    pub usage: Vec<u8>,
    /// The tool calls of a stream's chat chunks, by index.
    pub calls: Vec<KeptCall>,
    pub cache: Option<CacheUsage>,
}

/// Most tool calls an answer's stream is read for: a fragment of a call past them (a target
/// naming call 10^18) is not read, so a stream's calls cannot fill memory.
pub const MOST_CALLS: usize = 256;

/// A tool call joined from a stream's chat chunks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptCall {
    pub id: String,
    pub name: String,
    /// The arguments' fragments, joined.
    pub arguments: String,
}

impl Kept {
    /// Adds a chat chunk's delta: its text, and its tool call fragments to their calls.
    pub fn chat(&mut self, delta: &crate::wire::sse::Delta) {
        if let Some(text) = &delta.content {
            self.text.push_str(text);
        }
        for part in delta.tool_calls.iter().flatten() {
            let at = usize::try_from(part.index.unwrap_or(0)).unwrap_or(usize::MAX);
            if at >= MOST_CALLS {
                continue;
            }
            while self.calls.len() <= at {
                self.calls.push(KeptCall::default());
            }
            let call = &mut self.calls[at];
            call.id.push_str(part.id.as_deref().unwrap_or_default());
            if let Some(function) = &part.function {
                call.name
                    .push_str(function.name.as_deref().unwrap_or_default());
                call.arguments
                    .push_str(function.arguments.as_deref().unwrap_or_default());
            }
        }
    }

    /// Keeps what a stream's event held.
    pub fn keep(&mut self, held: crate::wire::sse::Held) {
        use crate::wire::sse::Held;
        match held {
            Held::Chat { delta, usage } => {
                if let Some(delta) = delta {
                    self.chat(delta);
                }
                if let Some(data) = usage {
                    self.usage.extend_from_slice(b"data: ");
                    self.usage.extend_from_slice(data);
                    self.usage.extend_from_slice(b"\n\n");
                }
            }
            Held::Event(event) => {
                self.answer.extend_from_slice(event);
                self.answer.extend_from_slice(b"\n\n");
            }
            Held::Nothing => {}
        }
    }
}

impl Exchange {
    /// The prompt cache the upstream reported, for a session's turn.
    pub fn cache(&self) -> Option<CacheUsage> {
        self.kept.as_ref().and_then(|k| k.cache)
    }
}

/// What the upstream said of a prompt and its cache, in its own usage fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// The whole prompt in tokens, cached or not.
    pub prompt_tokens: u64,
    /// Of which read from the cache.
    pub cached_tokens: u64,
    /// Of which written to the cache.
    pub written_tokens: u64,
    /// The usage had the API's cache fields (a hit or a miss can be told).
    pub reported: bool,
}

impl CacheUsage {
    /// A hit: any of the prompt came from the cache.
    pub fn hit(&self) -> bool {
        self.cached_tokens > 0
    }
}

/// What a request carried, for the breakdown: its class and its size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tag {
    pub class: u16,
    /// A session's turn, from 1 (0: not a session's request).
    pub turn: u16,
    /// A session's request that sends tool results (a round of an agent loop).
    pub tool: bool,
    /// A request of one of a session's branches (sub-agents); `turn` counts the branch's own.
    pub branch: bool,
    pub body_bytes: u32,
    pub prompt_tokens: u32,
}
