//! The probed windows' counts as the result's figures: allocations, bytes and frees per
//! request with a 95% interval across trials, the stacks of every window added, growth at rest,
//! and the modeled cost of the gateway's own runs.

use gatebench_shared::stats::Interval;
use gatebench_shared::trials::AcrossTrials;

use crate::model::role::Role;
use crate::results::compare::TrialRun;
use crate::results::cost::{model, CostModel, Price};
use crate::results::memory::{MemoryProfile, TrialMemory};
use crate::results::resources::ResourceReport;

use crate::engine::profiler::cpu::GatewayCpu;
use crate::engine::profiler::memory::MemorySession;
use crate::engine::profiler::rest;

/// Fills `memory` from the session and the runs; `gateway` names the gateway's own and its
/// probed target.
pub fn figures(
    memory: &mut MemoryProfile,
    s: MemorySession,
    runs: &[TrialRun],
    gateway: [&Role; 2],
) {
    let [own, probed] = gateway;
    let mut trials = s.trials;
    for (t, run) in trials.iter_mut().zip(runs_of(runs, probed)) {
        t.requests = run.run.ok;
        if run.run.failed > 0 {
            memory.unavailable.push(format!(
                "window {}: {} failed requests are not in the per-request figures' denominator",
                t.trial, run.run.failed
            ));
        }
    }
    let counted: Vec<&TrialMemory> = trials
        .iter()
        .filter(|t| t.counted && t.requests > 0)
        .collect();
    let per = |f: &dyn Fn(&TrialMemory) -> Option<f64>| -> Option<Interval> {
        let values: Vec<f64> = counted
            .iter()
            .filter_map(|t| f(t).map(|v| v / t.requests as f64))
            .collect();
        interval(&values)
    };
    memory.allocs_per_request = per(&|t| Some(t.allocs));
    memory.bytes_per_request = per(&|t| Some(t.bytes));
    memory.frees_per_request = per(&|t| t.frees);
    memory.loadgen_allocs_per_request = per(&|t| t.loadgen_allocs.map(|n| n as f64));
    // What the gateway served between the first probed run's rest and the last's.
    let served: u64 = runs
        .iter()
        .filter(|r| r.trial >= 2 && (r.name == *own || r.name == *probed))
        .map(|r| r.run.requests + r.run.warmup_requests)
        .sum();
    memory.growth = rest::growth(memory.rest_before_load, &trials, served);
    memory.allocated = s.had_stacks.then_some(s.allocated);
    memory.live = s.had_live.then_some(s.live);
    memory.processes = s.processes;
    if let Some(described) = s.described {
        memory.tool = Some(described);
    }
    memory.unavailable.extend(s.problems);
    if counted.len() < 2 && !trials.is_empty() {
        memory.unavailable.push(format!(
            "{} of {} probed windows counted: an interval needs two (--trials)",
            counted.len(),
            trials.len()
        ));
    }
    memory.trials = trials;
}

/// The mean with its 95% interval across trials; one trial gives its figure as a point.
fn interval(values: &[f64]) -> Option<Interval> {
    match values {
        [] => None,
        [one] => Some(Interval {
            estimate: *one,
            low: *one,
            high: *one,
            confidence: 0.0,
        }),
        _ => AcrossTrials::of_estimates(values).map(|a| a.interval(0.95)),
    }
}

/// The cost modeled on the gateway's own runs (`unprobed`): its CPU in their windows, its peak
/// resident memory (the resource sampler's, over the whole profile: the probes are in the
/// kernel and add none to it), their mean throughput. `None`, with the reason in `problems`,
/// when an input is missing.
pub fn cost_of(
    price: &Price,
    cpu: &GatewayCpu,
    resources: &[ResourceReport],
    runs: &[TrialRun],
    unprobed: &Role,
    problems: &mut Vec<String>,
) -> Option<CostModel> {
    let mut missing = |what: &str| {
        problems.push(format!("no modeled cost: {what}"));
        None
    };
    let Some(cores) = cpu.cores() else {
        return missing("the gateway's CPU was not read in any of its windows");
    };
    let Some(peak) = resources
        .iter()
        .find(|r| r.name == unprobed.as_str())
        .map(|r| r.load_rss_peak_bytes)
        .filter(|&b| b > 0)
    else {
        return missing("the gateway's resident memory was not sampled");
    };
    let own: Vec<f64> = runs_of(runs, unprobed).map(|r| r.run.throughput).collect();
    if own.is_empty() {
        return missing("the gateway's own runs did not run");
    }
    let throughput = own.iter().sum::<f64>() / own.len() as f64;
    model(price, cores, peak, throughput).or_else(|| missing("no throughput"))
}

/// The runs of target `name`.
pub fn runs_of<'a>(runs: &'a [TrialRun], name: &'a Role) -> impl Iterator<Item = &'a TrialRun> {
    runs.iter().filter(move |r| r.name == *name)
}
