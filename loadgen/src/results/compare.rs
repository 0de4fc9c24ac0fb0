//! The versioned JSON result of `loadgen compare` (schema `gatebench.loadgen.compare/1`): every
//! trial's runs, each target's figures across trials, and each percentile's added latency.

use crate::results::comparison::{ComparisonFooter, ComparisonHeader};
use crate::results::run::TargetRun;
use gatebench_shared::stats::Interval;
use serde::{Deserialize, Serialize};

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.compare/1";

/// The versioned JSON result of `loadgen compare`.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompareResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    /// The load, the targets, the twin and the trials.
    #[serde(flatten)]
    pub header: ComparisonHeader,
    /// Every trial of every target, in the order they ran.
    pub runs: Vec<TrialRun>,
    pub summary: Vec<TargetSummary>,
    pub deltas: Vec<PercentileDelta>,
    /// With sessions: what each gateway adds to each turn number's median TTFT and response
    /// time (`percentile` names the turn and the metric), judged with `deltas` as one family.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn_deltas: Vec<PercentileDelta>,
    /// The processes sampled, and whether the figures can be trusted.
    #[serde(flatten)]
    pub footer: ComparisonFooter,
}

/// One trial of one target.
#[derive(Debug, Serialize, Deserialize)]
pub struct TrialRun {
    /// From 1.
    pub trial: usize,
    pub name: crate::model::role::Role,
    pub run: TargetRun,
}

/// The response-time percentiles compared, with their names in results.
pub const PERCENTILES: [&str; 4] = ["p50", "p90", "p99", "p999"];

/// One trial's figures of one target, as the analysis needs them.
#[derive(Debug, Clone)]
pub struct TrialFigures {
    pub requests: u64,
    pub ok: u64,
    pub throughput: f64,
    /// Response time (µs) at each of [`PERCENTILES`].
    pub percentiles_us: [f64; 4],
}

/// One target over all its trials: the seven-gateway table's row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetSummary {
    pub name: crate::model::role::Role,
    pub trials: usize,
    pub requests: u64,
    pub ok: u64,
    /// Mean over the trials, successful responses per second.
    pub throughput: f64,
    pub success_rate: f64,
    /// Median over the trials of each percentile, µs.
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
}

/// What a gateway adds at one percentile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PercentileDelta {
    pub gateway: crate::model::role::Role,
    pub percentile: String,
    /// gateway − direct for each trial, µs.
    pub per_trial_us: Vec<f64>,
    /// Mean of the per-trial differences with a 95% t interval (needs two trials or more).
    pub added_us: Option<Interval>,
    /// The test's p-value (against the twin at this percentile, or against ±`--min-effect`),
    /// Holm-adjusted over every gateway and percentile of the result but the twin's (needs two
    /// trials or more).
    #[serde(default)]
    pub p_adjusted: Option<f64>,
    /// The smallest difference resolved at this percentile, µs: the farthest end of the
    /// twin's interval from zero, at least `--min-effect` (0 when neither).
    #[serde(default)]
    pub resolution_us: f64,
    /// True on the twin's own row (the control).
    #[serde(default)]
    pub control: bool,
    /// "adds latency", "faster than direct", "within the resolution (±R µs)", …
    #[serde(default)]
    pub verdict: String,
}
