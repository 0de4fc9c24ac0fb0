//! Every command's options as plain data, in one place: the command line (flags, shared with the
//! preset TOML file) and the preset merge (`preset`). Options import nothing of the code that
//! runs them: each command's module (and the generator, for the load) turns them into a plan.
//!
//! - `load`: the load options of every command with a load (`LoadArgs`), all of `loadgen run`'s.
//! - `request`: what each request carries (run and overhead); `gateways`: the upstream and the
//!   gateways, and how a difference is judged against the twin (every command of gateways).
//! - `compare` / `sweep` / `ladder` / `capacity` / `profile` / `overhead` / `corpus` /
//!   `merge`: each command's own options, flattening the groups it takes.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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

/// An open-loop, rate-paced load generator that corrects coordinated omission.
#[derive(Debug, Parser)]
#[command(name = "loadgen", version)]
pub struct Cli {
    /// Print the command's resolved options (flags over the preset, defaults filled in) as a
    /// preset and exit, sending nothing; `--preset` reads the text back into the same plan.
    #[arg(long, global = true)]
    pub print_config: bool,
    #[command(subcommand)]
    pub command: CommandArgs,
}

/// The command a command line names, with its options.
#[derive(Debug, Subcommand)]
pub enum CommandArgs {
    /// Send load to one or more targets (or, with no --target, to an embedded mock) and report.
    Run(LoadArgs),
    /// Measure what gateways add to a call: paired rounds direct and through each gateway,
    /// with bootstrap intervals.
    Overhead(OverheadArgs),
    /// Compare the same constant-rate load direct and through gateways, in alternating trials,
    /// with each percentile's added latency and an interval across trials.
    Compare(CompareArgs),
    /// Sweep load levels (concurrency or rate), direct and through gateways, flagging levels
    /// whose direct baseline saturated.
    Sweep(SweepArgs),
    /// Find the highest rate each target sustains within an SLO (goodput): bracketing and
    /// narrowing over fixed-length runs; gateways searched under the direct upstream's own.
    Capacity(CapacityArgs),
    /// Open N streams at one instant per level, direct and through gateways: completions,
    /// failures, TTFT, and whether the gateway re-chunked or buffered the stream.
    Ladder(LadderArgs),
    /// Hold a steady load on one gateway and sample its process with perf after the warm-up:
    /// on-CPU and off-CPU flame graphs beside its latency, its CPU and memory, and (with
    /// --direct) what it adds and what the sampling itself cost; or --diff two folded stacks.
    Profile(Box<ProfileArgs>),
    /// Add the results (or interval logs) of the shards of one plan (`run --shard I/N`) into
    /// one result and report, exactly: histograms are added, never averaged.
    Merge(MergeArgs),
    /// Write a seeded synthetic request corpus (JSON lines) for `run --requests-file`: prompt
    /// and output lengths from a published workload's statistics or your own distributions,
    /// a models mix, shares of streaming, tool-carrying and repeated requests.
    Corpus(CorpusArgs),
    /// Measure what gateways do when their upstreams fail, throttle, repeat or differ:
    /// failover, retries, caches, rate limits and balance, steering gatebench mocks through
    /// their control routes and joining each request with what every upstream recorded.
    Behaviour(BehaviourArgs),
    /// Can this machine measure? Its kernel timer, loopback, loadgen's schedule lag, the mock's
    /// timing error and the verdicts of an identical mock and a known 20 µs delay, each beside
    /// its target; exit 3 when the host keeps them from it.
    Selftest(SelftestArgs),
    /// Render a result file again: Markdown, CSV, JSON, or a self-contained HTML page with plots.
    Report(ReportArgs),
    /// Check a preset file for a command (run, overhead, compare, sweep, ladder, capacity,
    /// profile) without sending anything: it parses and makes a valid plan. `check-profile`,
    /// its former name, still works.
    #[command(alias = "check-profile")]
    CheckPreset(CheckPresetArgs),
}

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
