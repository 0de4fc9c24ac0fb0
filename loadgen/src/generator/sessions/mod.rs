//! Conversations (`--sessions FILE`): sessions of turns, each turn resending the history so far
//! (the earlier user messages and the upstream's actual answers) and then its own user message.
//!
//! What a session is lives here; reading one from a file (gatebench's own lines, AIPerf's
//! `multi_turn` lines, vLLM's multi-turn conversations) and generating them seeded are beside it.
//! A turn's body is built when the turn is due, since it holds the answers so far.

use std::sync::Arc;

use serde_json::Value;

pub mod answer;
pub mod body;
mod branch;
mod fields;
mod line;
pub mod marks;
pub mod plan;
mod read;
pub mod synth;
pub mod tally;
#[cfg(test)]
mod tests;
mod text;
mod turn;
mod vllm;

pub use line::DEFAULT_TOOL_RESULT_TOKENS;
pub use read::load;

/// The sessions a run sends, in order: session `i` is the schedule's `i`-th arrival.
#[derive(Debug, Clone)]
pub struct SessionSet {
    /// The file they were read from, or how they were generated.
    pub source: String,
    pub format: SessionFormat,
    pub sessions: Vec<Session>,
    /// CRC-32 of the source bytes (shards of different session files are not merged).
    pub crc32: u32,
}

/// The form a session file was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionFormat {
    /// gatebench's own lines (`loadgen corpus --sessions` writes them).
    Gatebench,
    /// NVIDIA AIPerf's `multi_turn` lines: `{"session_id", "turns": [{"text", "delay"}]}`.
    AiperfMultiTurn,
    /// vLLM's multi-turn benchmark conversations (ShareGPT-like `messages`).
    VllmConversations,
}

/// One conversation.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    /// The messages every turn sends first (a shared system prompt, per-user context).
    pub preamble: Vec<Message>,
    /// Tool definitions every turn offers (an OpenAI `tools` array), if any.
    pub tools: Option<Arc<Value>>,
    /// The model asked for; `None`: the run's.
    pub model: Option<String>,
    pub turns: Vec<Turn>,
    /// Sub-agents: conversations of their own that fork off a turn and join a later one.
    pub branches: Vec<Branch>,
}

/// A sub-agent, as GuideLLM's branches have it: when turn `after` (from 0) of its session is
/// answered it starts with a history of its own (its preamble, none of the session's), runs
/// its turns beside the session's, and turn `join` waits for it and carries its last exchange
/// (its last user message and answer) before its own message.
#[derive(Debug, Clone)]
pub struct Branch {
    pub after: usize,
    pub join: usize,
    pub preamble: Vec<Message>,
    pub turns: Vec<Turn>,
}

/// One turn: the user's new message, and what the client does around it.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The new user message's text.
    pub user: String,
    /// Wait before this turn, from the end of the previous one (for the first turn, from the
    /// session's start), in µs; `None`: the run's `--think`.
    pub think_us: Option<u64>,
    /// `max_tokens` of this turn's requests; `None`: the run's.
    pub max_tokens: Option<u32>,
    /// Most tool rounds this turn takes: while an answer holds tool calls and rounds are left,
    /// the next request sends one tool result per call (an agent loop), then the turn ends.
    pub tool_rounds: u32,
    /// Size of each tool result sent back, in tokens (4 bytes a token).
    pub tool_result_tokens: u32,
}

/// A message as a client resends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// Most sessions one file may hold.
pub const MAX_SESSIONS: usize = 1_000_000;

/// Most turns one session may hold.
pub const MAX_TURNS: usize = 10_000;

/// Most branches one session may hold.
pub const MAX_BRANCHES: usize = 64;

/// Most tool rounds one turn may take.
pub const MAX_TOOL_ROUNDS: u32 = 64;

impl SessionSet {
    /// Turns in the longest session.
    pub fn most_turns(&self) -> usize {
        self.sessions
            .iter()
            .map(|s| s.turns.len())
            .max()
            .unwrap_or(0)
    }
}
