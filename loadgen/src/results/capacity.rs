//! The versioned JSON result of `loadgen capacity`: the SLO, each target's search and its steps.

use crate::model::target::Named;
use crate::results::plan::PlanRecord;
use serde::{Deserialize, Serialize};

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.capacity/1";

/// One run of the search.
#[derive(Debug, Serialize, Deserialize)]
pub struct Step {
    pub rate: f64,
    /// Every objective held, in a valid run.
    pub met: bool,
    #[serde(default)]
    pub judged: Vec<Judged>,
    /// Successful responses per second over the span the run's requests took to end.
    pub goodput: f64,
    pub success_rate: f64,
    pub response_p50_us: u64,
    pub response_p99_us: u64,
    /// The generator kept its schedule.
    pub valid: bool,
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
    /// The generator's own error in this run: the larger of its schedule lag p99 and send
    /// delay p99, µs.
    #[serde(default)]
    pub generator_error_us: u64,
    /// The step tells of the target: a valid run, or a run that sent its whole rate and
    /// missed each objective by more than the generator's own error (an overloaded target
    /// queues thousands of requests, which can make the generator late by a millisecond; a
    /// p99 hundreds of milliseconds over its limit is the target's all the same).
    #[serde(default)]
    pub conclusive: bool,
    /// The wait for the target to serve a missed step's backlog before this step, when the
    /// step before it missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_wait: Option<BacklogWait>,
}

/// The wait for a target to serve the backlog of a missed step, before the next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BacklogWait {
    /// From the first probe to the last one's end, ms.
    pub waited_ms: f64,
    /// Requests sent alone, one after the other, to see.
    pub probes: u32,
    /// The last probe was answered within `bound_ms`: the backlog is gone. `false`: the wait
    /// ended first (30 s, a target refusing connections, or Ctrl-C), and the step ran on what
    /// was left of it.
    pub cleared: bool,
    /// Twice the idle target's response time, plus 1 ms.
    pub bound_ms: f64,
    /// Why the last probe failed, when it did (`timeout`, `status_503`, `connect_refused`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// One target's search and its answer.
#[derive(Debug, Serialize, Deserialize)]
pub struct TargetSearch {
    pub name: crate::model::role::Role,
    pub url: String,
    /// The highest rate that met the SLO (None: not even the lowest tried).
    #[serde(default)]
    pub capacity: Option<f64>,
    /// The idle target's response time before the search, ms: the fastest of three requests
    /// sent alone (lowered by faster answers during the search). `None`: none was answered, so
    /// no step waited for a backlog.
    #[serde(default)]
    pub idle_ms: Option<f64>,
    pub bracket: Bracket,
    /// The rates the search could go up to: `--max-rate`, or for a gateway the direct's
    /// capacity.
    pub ceiling: f64,
    /// Why the answer is a bound rather than a bracket, when it is: `ceiling` (met at the
    /// highest rate allowed), `upstream` (a gateway met the SLO at the direct's capacity),
    /// `generator` (a run that did not keep its schedule), `runs` (out of runs before the
    /// precision), `floor`, `interrupted`.
    pub limited_by: Option<String>,
    pub steps: Vec<Step>,
    /// `--confirm`: the two rates run again.
    #[serde(default)]
    pub confirmations: Vec<Step>,
}

/// The versioned JSON result of `loadgen capacity`.
#[derive(Debug, Serialize, Deserialize)]
pub struct CapacityResult {
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    /// Each run's load (its rate set per step).
    #[serde(default)]
    pub plan: PlanRecord,
    pub slo: Slo,
    pub precision: f64,
    #[serde(default)]
    pub start_rate: f64,
    #[serde(default)]
    pub max_rate: f64,
    #[serde(default)]
    pub max_runs: usize,
    #[serde(default)]
    pub targets: Vec<Named>,
    #[serde(default)]
    pub mock: Option<String>,
    pub searches: Vec<TargetSearch>,
    /// Every search ended with a bracket within the precision, or at a ceiling.
    pub valid: bool,
}

/// Where the search stands after its runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Bracket {
    /// The highest rate that met the SLO.
    pub passed: Option<f64>,
    /// The lowest rate that did not.
    pub failed: Option<f64>,
    pub runs: usize,
    /// `failed / passed − 1` is within the precision.
    #[serde(default)]
    pub resolved: bool,
    /// The highest rate allowed met the SLO: the capacity is at least that.
    #[serde(default)]
    pub at_ceiling: bool,
}

/// A set of objectives, all of which must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub text: String,
    #[serde(default)]
    pub objectives: Vec<Objective>,
}

/// How one run measured against one objective.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Judged {
    pub objective: String,
    /// The run's value: µs for a percentile, a share for errors.
    pub value: f64,
    pub limit: f64,
    pub met: bool,
}

/// One objective.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Objective {
    /// `metric`'s `quantile` (0.99 for p99) under `limit_us`.
    Percentile {
        metric: &'static str,
        quantile: f64,
        limit_us: u64,
    },
    /// Failed requests under this share of all.
    Errors { limit: f64 },
}

/// An objective as its file holds it: the metric by its name.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum ObjectiveText {
    Percentile {
        metric: String,
        quantile: f64,
        limit_us: u64,
    },
    Errors {
        limit: f64,
    },
}

impl<'de> Deserialize<'de> for Objective {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Objective, D::Error> {
        Objective::try_from(ObjectiveText::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<ObjectiveText> for Objective {
    type Error = String;

    /// The metric read back as the name this build gives it.
    fn try_from(text: ObjectiveText) -> Result<Objective, String> {
        Ok(match text {
            ObjectiveText::Percentile {
                metric,
                quantile,
                limit_us,
            } => Objective::Percentile {
                metric: crate::results::metric::Metric::from_name(&metric)
                    .ok_or_else(|| format!("unknown metric '{metric}'"))?
                    .name(),
                quantile,
                limit_us,
            },
            ObjectiveText::Errors { limit } => Objective::Errors { limit },
        })
    }
}
