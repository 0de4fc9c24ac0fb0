//! What each request carries and how long it may take, and the client's cores and seed: flags
//! of `run` (so of every command with a load) and of `overhead`, declared once.

use clap::Args;
use serde::{Deserialize, Serialize};

/// The request flags. Every one is also a key of the `--preset` TOML file.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct RequestFlags {
    /// What to send: chat or chat-stream (overhead: either or both, comma-separated). Default
    /// chat (overhead: both; ladder: chat-stream).
    #[arg(long)]
    pub scenario: Option<String>,
    /// Request body instead of a scenario's: @FILE or literal JSON.
    #[arg(long)]
    pub body: Option<String>,
    /// Extra request header, `Name: value` (repeatable).
    #[arg(long = "header")]
    #[serde(default, rename = "header")]
    pub headers: Vec<String>,
    /// Model named in scenario bodies. Default gpt-4o-mini.
    #[arg(long)]
    pub model: Option<String>,
    /// Output tokens asked for in scenario bodies (max_tokens). Default 16.
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// Time a request may take from its dispatch, connect included, like 30s. Default 30s.
    #[arg(long)]
    pub timeout: Option<String>,
    /// Cores to pin workers to, like 1 or 0-1 (overhead: the one core of its client, like 0).
    /// Default: not pinned. `--pin` and the key `pin`, its former names, are still read.
    #[arg(long, alias = "pin")]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub cores: Option<String>,
    /// Seed of the Poisson schedule, of a corpus's random order and of a trace's bodies
    /// (overhead: of the round order and of the bootstrap). Default 0.
    #[arg(long)]
    pub seed: Option<u64>,
}
