//! The versioned JSON result of `loadgen overhead`: the plan, every call's time (so each
//! interval can be recomputed), the deltas, and the verdict.

use std::collections::BTreeMap;

use gatebench_shared::stats::quantile_of_sorted;
use serde::{Deserialize, Serialize};

use super::analysis::Delta;
use super::plan::OverheadPlan;
use super::rounds::{Call, TargetCalls};

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.overhead/1";

#[derive(Debug, Serialize, Deserialize)]
pub struct OverheadResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    pub plan: OverheadPlan,
    /// The direct target's configuration (TOML) when it is a gatebench mock.
    #[serde(default)]
    pub mock: Option<String>,
    pub trials: Vec<Trial>,
    /// One figure and verdict per gateway, scenario and metric across trials (the headline).
    #[serde(default)]
    pub combined: Vec<super::verdict::Combined>,
    /// Every pair of gateways against each other, across trials.
    #[serde(default)]
    pub between: Vec<super::verdict::Between>,
    /// Processes sampled with --sample-pid: idle before the rounds, mean and peak during them.
    #[serde(default)]
    pub resources: Vec<crate::engine::sampler::ResourceReport>,
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
    pub name: String,
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

impl TargetTrial {
    pub fn new(name: &str, calls: TargetCalls, stream: bool) -> TargetTrial {
        let ok = calls.calls.iter().flatten().count();
        let e2e: Vec<Option<f64>> = calls.calls.iter().map(|c| c.map(|c| c.e2e_us)).collect();
        let ttft: Vec<Option<f64>> = calls
            .calls
            .iter()
            .map(|c| c.and_then(|c| c.ttft_us))
            .collect();
        // Present when any call carried the mock's timestamps.
        let legs = |pick: fn(&Call) -> Option<f64>| {
            let column: Vec<Option<f64>> = calls
                .calls
                .iter()
                .map(|c| c.as_ref().and_then(pick))
                .collect();
            column.iter().any(Option::is_some).then_some(column)
        };
        TargetTrial {
            name: name.to_string(),
            calls: calls.calls.len(),
            ok,
            failed: calls.calls.len() - ok,
            errors: calls.errors,
            connections_opened: calls.connections_opened,
            connections_reused: calls.connections_reused,
            e2e_us: Percentiles::of(e2e.iter().flatten().copied()).unwrap_or_default(),
            ttft_us: stream
                .then(|| Percentiles::of(ttft.iter().flatten().copied()))
                .flatten(),
            rounds_e2e_us: e2e,
            rounds_ttft_us: stream.then_some(ttft),
            rounds_request_leg_us: legs(|c| c.request_leg_us),
            rounds_response_leg_us: legs(|c| c.response_leg_us),
        }
    }
}
