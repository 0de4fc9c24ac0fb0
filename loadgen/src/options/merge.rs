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
    /// Merge even when shards are missing; the merged result is then marked invalid and lists
    /// every missing shard.
    #[arg(long)]
    pub partial: bool,
    /// Why shard I has no result, like '2:task failed: exit 1' (repeatable; with --partial):
    /// said in the merged result beside the shard, where it would say "no result given".
    #[arg(long, value_name = "I:WHY")]
    pub absent: Vec<String>,
    /// Exit 1 when the merged run's response-time p99 is over this, like 50ms. Default: the
    /// shards' own `--max-p99`.
    #[arg(long)]
    pub max_p99: Option<String>,
    /// Exit 1 when the merged run's share of failed requests is over this, like 0.01. Default:
    /// the shards' own `--max-error-rate`.
    #[arg(long)]
    pub max_error_rate: Option<f64>,
    /// Objectives the merged run must meet, all of them, in `capacity`'s syntax, like
    /// p99<50ms,ttft_p99<500ms,errors<1%; exit 1 when one is not.
    #[arg(long)]
    pub slo: Option<String>,
}
