//! The versioned JSON result of `loadgen profile`: a comparison's result with the perf
//! samples of its windows (folded stacks) and what the sampling cost.

use crate::options::CallGraph;
use crate::results::compare::CompareResult;
use crate::results::compare::PercentileDelta;
use serde::{Deserialize, Serialize};

pub use crate::results::folded::Folded;

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.profile/1";

/// The suffix of the sampled runs' target name.
pub const SAMPLED: &str = "+perf";

/// The versioned JSON result of `loadgen profile`: a comparison's (the targets, every trial,
/// the summary, the deltas, the resources) and the profile.
#[derive(Debug, Serialize, Deserialize)]
pub struct ProfileResult {
    #[serde(flatten)]
    pub compare: CompareResult,
    pub profile: Profile,
    /// The sampled runs against the unsampled runs of the same gateway, percentile by
    /// percentile: what the profiler added (judged against the twin when there is one).
    #[serde(default)]
    pub profiler_cost: Vec<PercentileDelta>,
    /// With `--memory`: the allocations counted in the probed runs (`NAME+memory`), whose cost
    /// `profiler_cost` then is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::results::memory::MemoryProfile>,
    /// With `--price`: a cost modeled from the measured CPU, memory and throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<crate::results::cost::CostModel>,
}

/// What was sampled and what it showed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    /// The gateway's name.
    pub gateway: crate::model::role::Role,
    /// The target its sampled runs are reported under (`NAME+perf`).
    pub sampled_target: crate::model::role::Role,
    pub pid: u32,
    /// The processes sampled: the gateway's and those under it when sampling began.
    pub processes: Vec<u32>,
    /// What `perf --version` printed; none when perf could not run.
    pub perf: Option<String>,
    pub frequency_hz: u32,
    pub call_graph: CallGraph,
    /// Sampled windows (one per trial: the measured part of each sampled run).
    pub windows: usize,
    /// Seconds perf recorded on-CPU, over every window.
    pub recorded_s: f64,
    /// Samples of the stacks on a CPU; none when not recorded.
    pub on_cpu: Option<Folded>,
    /// Microseconds off a CPU by the stack left from; none when not recorded.
    pub off_cpu: Option<Folded>,
    /// Why the profile, or a part of it, is missing; empty when complete.
    pub unavailable: Vec<String>,
    /// The folded stacks (`.folded`) and flame graphs (`.svg`) written beside the result.
    pub files: Vec<String>,
}
