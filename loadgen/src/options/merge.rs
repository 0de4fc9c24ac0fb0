//! Options of `loadgen merge`.

use std::path::PathBuf;

use clap::Args;

/// Options of `loadgen merge`.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The shards' JSON results (`loadgen run --shard I/N --out FILE`), or their interval logs
    /// of one metric (`.hlog`, from --hdr-log).
    #[arg(required = true, num_args = 1..)]
    pub inputs: Vec<PathBuf>,
    /// Write the merged result (or log) here (`-`: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Merge even when shards are missing; the merged result is then marked invalid.
    #[arg(long)]
    pub partial: bool,
}
