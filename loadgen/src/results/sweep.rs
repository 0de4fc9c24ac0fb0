//! The versioned JSON result of `loadgen sweep`: each load level's comparison and the headline.

use crate::options::LevelKind;
use crate::results::compare::TrialRun;
use crate::results::compare::{PercentileDelta, TargetSummary};
use crate::results::comparison::{ComparisonFooter, ComparisonHeader};
use serde::{Deserialize, Serialize};

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.sweep/1";

/// One level: every target's trials, summaries and deltas.
#[derive(Debug, Serialize, Deserialize)]
pub struct Level {
    pub level: f64,
    pub summary: Vec<TargetSummary>,
    pub deltas: Vec<PercentileDelta>,
    /// Median over trials of the direct target's p99, µs.
    pub direct_p99_us: f64,
    /// The direct p99 exceeds twice the single-client floor: excluded from the headline.
    pub baseline_saturated: bool,
    /// Every trial's full run (not read back by reports).
    #[serde(skip_deserializing, default)]
    pub runs: Vec<TrialRun>,
}

/// A gateway's added latency at the highest level whose baseline was not saturated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Headline {
    pub gateway: crate::model::role::Role,
    pub level: f64,
    pub added_p50_us: f64,
    pub added_p99_us: f64,
}

/// The versioned JSON result of `loadgen sweep`.
#[derive(Debug, Serialize, Deserialize)]
pub struct SweepResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    /// The load, the targets, the twin and the trials.
    #[serde(flatten)]
    pub header: ComparisonHeader,
    pub level_kind: LevelKind,
    /// True for concurrency levels: closed-loop load, whose latencies cannot be corrected for
    /// coordinated omission (each request waits for the last), so the curve is exploratory,
    /// not a latency figure to publish.
    #[serde(default)]
    pub exploratory: bool,
    /// The direct target's p99 with one request in flight, µs.
    pub floor_p99_us: f64,
    pub levels: Vec<Level>,
    pub headline: Vec<Headline>,
    /// The processes sampled over the whole sweep, and whether the figures can be trusted.
    #[serde(flatten)]
    pub footer: ComparisonFooter,
}
