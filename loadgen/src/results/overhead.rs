//! The versioned JSON result of `loadgen overhead`: the plan, every call's time (so each
//! interval can be recomputed), the deltas, and the verdict.

use std::collections::BTreeMap;

use gatebench_shared::stats::quantile_of_sorted;
use serde::{Deserialize, Serialize};

use crate::model::target::Named;
use crate::results::plan::RequestRecord;
use gatebench_shared::stats::Interval;
use std::path::PathBuf;
use std::time::Duration;

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.overhead/1";

#[derive(Debug, Serialize, Deserialize)]
pub struct OverheadResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    pub plan: OverheadPlan,
    /// How the resolution was obtained: the twin's disclosure (`--twin URL`, a second mock
    /// process started by loadgen, the direct URL again and why), or why there is none.
    #[serde(default)]
    pub resolution_source: String,
    /// The direct target's configuration (TOML) when it is a gatebench mock.
    #[serde(default)]
    pub mock: Option<String>,
    pub trials: Vec<Trial>,
    /// One figure and verdict per gateway, scenario and metric across trials (the headline).
    #[serde(default)]
    pub combined: Vec<Combined>,
    /// Every pair of gateways against each other, across trials.
    #[serde(default)]
    pub between: Vec<Between>,
    /// Processes sampled with --sample-pid: idle before the rounds, mean and peak during them.
    #[serde(default)]
    pub resources: Vec<crate::results::resources::ResourceReport>,
    /// True when no target failed more than 1% of its calls and every trial ran to the end.
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
    /// True when Ctrl-C cut the run short.
    pub interrupted: bool,
}

/// One trial of one scenario.
#[derive(Debug, Serialize, Deserialize)]
pub struct Trial {
    /// From 1.
    pub trial: usize,
    pub scenario: String,
    pub stream: bool,
    pub targets: Vec<TargetTrial>,
    pub deltas: Vec<Delta>,
}

/// The scenarios of `trials`, each once, in the order they first ran.
pub fn scenarios(trials: &[Trial]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in trials {
        if !out.contains(&t.scenario.as_str()) {
            out.push(&t.scenario);
        }
    }
    out
}

/// One target in one trial.
#[derive(Debug, Serialize, Deserialize)]
pub struct TargetTrial {
    pub name: crate::model::role::Role,
    pub calls: usize,
    pub ok: usize,
    pub failed: usize,
    pub errors: BTreeMap<String, u64>,
    pub connections_opened: u64,
    pub connections_reused: u64,
    pub e2e_us: Percentiles,
    pub ttft_us: Option<Percentiles>,
    /// Every measured round's end-to-end time (µs; null where the call failed).
    pub rounds_e2e_us: Vec<Option<f64>>,
    /// Every measured round's TTFT (µs), for streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_ttft_us: Option<Vec<Option<f64>>>,
    /// Every measured round's request and response legs (µs), with `--attribute`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_request_leg_us: Option<Vec<Option<f64>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_response_leg_us: Option<Vec<Option<f64>>>,
}

/// Percentiles of a small sample (interpolated between order statistics).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Percentiles> {
        let mut sorted: Vec<f64> = values.into_iter().collect();
        sorted.sort_by(f64::total_cmp);
        let q = |p| quantile_of_sorted(&sorted, p);
        Some(Percentiles {
            min: q(0.0)?,
            p50: q(0.5)?,
            p90: q(0.9)?,
            p99: q(0.99)?,
            max: q(1.0)?,
        })
    }
}

/// What one gateway adds for one scenario and metric, across trials.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Combined {
    pub gateway: crate::model::role::Role,
    pub scenario: String,
    pub metric: String,
    /// Trials combined.
    pub trials: usize,
    /// Mean of the trials' median differences against direct, with its 95% t interval over
    /// trials, µs.
    pub added_us: Interval,
    /// The smallest difference this setup resolves here, µs (the twin's interval's farthest
    /// end from zero, at least `--min-effect`); 0 when neither was measured nor given.
    pub resolution_us: f64,
    /// The test's p-value (against the twin, or against ±`--min-effect`), and Holm-adjusted
    /// over every row but the twin's.
    pub p_value: f64,
    pub p_adjusted: f64,
    pub verdict: String,
}

/// Two gateways against each other, for one scenario and metric.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Between {
    pub first: String,
    pub second: String,
    pub scenario: String,
    pub metric: String,
    /// What `first` adds beyond `second`, µs: the difference of their means across trials,
    /// with a 95% interval (Welch).
    pub difference_us: Interval,
    /// Welch's t test, and Holm-adjusted over every pair, scenario and metric.
    pub p_value: f64,
    pub p_adjusted: f64,
    pub verdict: String,
}

/// A validated `loadgen overhead`, its requests as `R`: the command holds them encoded, its
/// result as records (`RequestRecord`, written alike).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverheadPlan<R = RequestRecord> {
    /// The direct target first, then the twin (when there is one), then the gateways.
    pub targets: Vec<Named>,
    /// The second target is the twin (`--twin`), the A/A control.
    #[serde(default)]
    pub twin: bool,
    /// `--min-effect`, µs.
    #[serde(default)]
    pub min_effect_us: f64,
    pub rounds: usize,
    pub warmup_rounds: usize,
    pub trials: usize,
    #[serde(rename = "round_gap_us", with = "micros")]
    pub round_gap: Duration,
    /// One request per scenario, in order.
    #[serde(default = "Vec::new")]
    pub requests: Vec<R>,
    #[serde(rename = "timeout_us", with = "micros")]
    pub timeout: Duration,
    pub seed: u64,
    pub resamples: usize,
    pub confidence: f64,
    /// The client's one core (`--cores`; `pin` in files before it was named so).
    #[serde(alias = "pin")]
    pub core: Option<usize>,
    /// Busy-poll while waiting for each response.
    #[serde(default)]
    pub spin: bool,
    /// Ask the mock for its timestamps and split the overhead into request and response legs.
    #[serde(default)]
    pub attribute: bool,
    #[serde(skip)]
    pub out: Option<PathBuf>,
}

impl<R> OverheadPlan<R> {
    /// The same plan with each request as `record` makes it.
    pub fn recorded<S>(self, record: impl Fn(&R) -> S) -> OverheadPlan<S> {
        OverheadPlan {
            requests: self.requests.iter().map(record).collect(),
            targets: self.targets,
            twin: self.twin,
            min_effect_us: self.min_effect_us,
            rounds: self.rounds,
            warmup_rounds: self.warmup_rounds,
            trials: self.trials,
            round_gap: self.round_gap,
            timeout: self.timeout,
            seed: self.seed,
            resamples: self.resamples,
            confidence: self.confidence,
            core: self.core,
            spin: self.spin,
            attribute: self.attribute,
            out: self.out,
        }
    }
}

/// Durations as whole microseconds in results.
mod micros {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_micros() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_micros)
    }
}

/// The added latency of one gateway for one metric in one trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Delta {
    pub gateway: crate::model::role::Role,
    /// `e2e`, `ttft` (streams), `request_leg` or `response_leg` (`--attribute`).
    pub metric: String,
    /// Rounds where both the direct call and the gateway's succeeded.
    pub pairs: usize,
    /// Median of the direct calls of those rounds, µs.
    pub direct_median_us: f64,
    /// Median of the gateway's calls of those rounds, µs.
    pub gateway_median_us: f64,
    /// Median of the per-round differences with its bootstrap interval, µs.
    pub added_us: Interval,
    /// False when the interval contains zero: not distinguishable from direct.
    pub distinguishable: bool,
}
