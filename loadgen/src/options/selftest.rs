//! Options of `loadgen selftest`.

use std::path::PathBuf;

use clap::Args;

/// Options of `loadgen selftest`.
#[derive(Debug, Clone, Args)]
pub struct SelftestArgs {
    /// Write the result (JSON, `selftest.schema.json`) here (`-`: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// How long each timed part runs: the timer's wake-ups, each schedule and each mock's
    /// answers; the verdicts run five trials of one paired round per 5 ms of it (at least 40).
    /// Default 2s (about 15 s in all).
    #[arg(long, default_value = "2s")]
    pub seconds: String,
    /// No progress lines.
    #[arg(long)]
    pub quiet: bool,
}
