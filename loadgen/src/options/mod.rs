//! The commands' options as plain data: their flags (shared with the preset TOML file) and the
//! preset merge (`preset`). Options import nothing of the code that runs them: each command's
//! module (and the generator, for the load) turns them into a plan. The command line itself,
//! the list of commands with their options, is `commands::CommandArgs`; a command whose
//! options no other command shares may keep them in its own folder.
//!
//! - `load`: the load options of every command with a load (`LoadArgs`), all of `loadgen run`'s.
//! - `request`: what each request carries (run and overhead); `gateways`: the upstream and the
//!   gateways, and how a difference is judged against the twin (every command of gateways).
//! - `compare` / `sweep` / `ladder` / `capacity` / `profile` / `overhead` / `corpus` /
//!   `merge`: each command's own options, flattening the groups it takes.

use std::path::PathBuf;

use clap::Args;

mod behaviour;
mod capacity;
mod compare;
mod corpus;
mod gateways;
mod ladder;
mod load;
mod memory;
mod merge;
mod overhead;
pub mod preset;
mod profile;
mod request;
mod selftest;
mod sessions;
mod sweep;

pub use behaviour::BehaviourArgs;
pub use capacity::{CapacityArgs, DEFAULT_MAX_RUNS, DEFAULT_PRECISION};
pub use compare::{CompareArgs, DEFAULT_TRIALS as COMPARE_TRIALS};
pub use corpus::{CorpusArgs, DEFAULT_MODELS as CORPUS_MODELS};
pub use gateways::{GatewayFlags, JudgeFlags, SettleFlag};
pub use ladder::{LadderArgs, DEFAULT_LEVELS as LADDER_LEVELS};
pub use load::LoadArgs;
pub use memory::{MemoryArgs, DEFAULT_REST as MEMORY_REST};
pub use merge::MergeArgs;
pub use overhead::OverheadArgs;
pub use profile::{
    CallGraph, ProfileArgs, DEFAULT_FREQUENCY as PROFILE_FREQUENCY,
    DEFAULT_TRIALS as PROFILE_TRIALS,
};
pub use request::RequestFlags;
pub use selftest::SelftestArgs;
pub use sessions::SessionFlags;
pub use sweep::{
    LevelKind, SweepArgs, DEFAULT_LEVELS as SWEEP_LEVELS, DEFAULT_TRIALS as SWEEP_TRIALS,
};

/// Reads the environment's former names as their new ones, before the command line is parsed:
/// `LOADGEN_PROFILE` names the preset (`LOADGEN_PRESET`) when that is not set. Called first, while
/// the process has one thread.
pub fn former_environment() {
    gatebench_shared::settings::read_former_names(&[("LOADGEN_PROFILE", "LOADGEN_PRESET")]);
}

/// Options of `loadgen check-preset`.
#[derive(Debug, Clone, Args)]
pub struct CheckPresetArgs {
    /// The command the preset is for: run, overhead, compare, sweep, ladder, capacity or
    /// profile.
    pub command: String,
    /// The preset file.
    pub preset: PathBuf,
}

/// Options of `loadgen report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A result file written with --out by any loadgen command (with --combine: several
    /// `loadgen compare` results).
    #[arg(required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// One table of every gateway in these `loadgen compare` results (one per gateway, each
    /// with its own direct run): requests, throughput, success, P50, P99, P99.9, added latency
    /// with its interval, CPU, peak memory, recording level and version.
    #[arg(long)]
    pub combine: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
    /// Write the report here instead of to standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The formats `loadgen report` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Markdown tables and disclosure, for write-ups.
    Md,
    /// CSV rows, for spreadsheets.
    Csv,
    /// The result itself, re-encoded (pretty-printed).
    Json,
    /// One self-contained HTML page with plots (no script, no network).
    Html,
}
