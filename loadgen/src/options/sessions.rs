//! Conversations instead of single requests: the session flags of `run` (so of every command
//! with a load), declared once.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

/// The session flags. Every one is also a key of the `--preset` TOML file.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct SessionFlags {
    /// Send conversations from this file instead of single requests: each session's turns
    /// resend the history so far (the upstream's actual answers) and a new user message.
    /// gatebench's own lines (`loadgen corpus --sessions` writes them), AIPerf's `multi_turn`
    /// lines and vLLM's multi-turn conversations are read. --rate is then sessions per second.
    #[arg(long)]
    pub sessions: Option<PathBuf>,
    /// Think time before each turn whose session gives none, from the end of the previous
    /// turn: a duration like 2s, or uniform:1s..3s, normal:2s,500ms, lognormal:2s,0.5 (seeded
    /// by --seed). Default 0.
    #[arg(long)]
    pub think: Option<String>,
    /// Most sessions active at once; a session due past it waits for one to end, and its
    /// first turn's latency counts from when it was due. Default: no bound.
    #[arg(long)]
    pub max_sessions: Option<usize>,
    /// A fixed number of users instead of a session rate: each runs the sessions of its own
    /// share back to back, one turn every --turn-gap (the file's think times are not used).
    #[arg(long)]
    pub users: Option<usize>,
    /// With --users: the gap between one user's turns, like 1s; a turn whose answer came
    /// later is sent at once and measured from when it was due.
    #[arg(long)]
    pub turn_gap: Option<String>,
    /// Where a session's bodies mark an explicit prompt cache (`cache_control` to Anthropic's
    /// /v1/messages, `cachePoint` blocks to Bedrock's /converse routes): none, system (after
    /// the system prompt, or the last tool), or history (there and after the newest message,
    /// moved forward each turn, as Anthropic advises for conversations); `:1h` asks for the
    /// one-hour life. Default history.
    #[arg(long)]
    pub cache_marks: Option<String>,
}
