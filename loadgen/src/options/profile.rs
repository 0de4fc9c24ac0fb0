//! Options of `loadgen profile`: the gateway's process and how to sample it, over the targets,
//! trials and load of `loadgen compare`; or `--diff BEFORE AFTER` of two folded stack files.

use std::path::PathBuf;

use clap::Args;

use super::CompareArgs;

/// On-CPU samples per second when `--frequency` is not given: a prime near 1 kHz, so sampling
/// does not run in lockstep with a gateway's own 1 ms timers.
pub const DEFAULT_FREQUENCY: u32 = 997;

/// Trials per target when `--trials` is not given.
pub const DEFAULT_TRIALS: usize = 3;

/// Options of `loadgen profile`. In a `--preset` file the keys are the flags' names
/// (`frequency`, `call-graph` and `off-cpu` besides compare's and run's keys); `--pid` and
/// `--perf` name things of this machine and are taken from the command line only.
#[derive(Debug, Clone, Default, Args, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ProfileArgs {
    /// Two folded stack files written by earlier profiles (before, after): write a differential
    /// flame graph of them, with the two runs' latency side by side, and exit sending nothing.
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"])]
    #[serde(skip)]
    pub diff: Vec<PathBuf>,
    /// The gateway's process: sampled with its threads and the processes under it (workers).
    #[arg(long)]
    #[serde(skip)]
    pub pid: Option<u32>,
    /// On-CPU samples per second. Default 997.
    #[arg(long)]
    pub frequency: Option<u32>,
    /// How stacks are walked: fp (frame pointers: cheapest, but code built without them loses
    /// its callers), dwarf (unwinds such code from a copy of each sample's stack; costlier and
    /// larger) or lbr (the CPU's branch records, where it has them). Default fp.
    #[arg(long)]
    pub call_graph: Option<String>,
    /// Off-CPU time (blocked and waiting for a CPU, from the scheduler's switches): on or off.
    /// Default on.
    #[arg(long)]
    pub off_cpu: Option<String>,
    /// The profiler to run. Default `perf` (Debian: linux-perf).
    #[arg(long)]
    #[serde(skip)]
    pub perf: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub memory: super::MemoryArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub compare: CompareArgs,
}

/// How stacks are walked (`--call-graph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallGraph {
    Fp,
    Dwarf,
    Lbr,
}

impl CallGraph {
    pub fn parse(text: &str) -> Option<CallGraph> {
        match text {
            "fp" => Some(CallGraph::Fp),
            "dwarf" => Some(CallGraph::Dwarf),
            "lbr" => Some(CallGraph::Lbr),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CallGraph::Fp => "fp",
            CallGraph::Dwarf => "dwarf",
            CallGraph::Lbr => "lbr",
        }
    }
}
