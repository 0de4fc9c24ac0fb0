//! One trial against one gateway: the first upstream steered for its window (the mock times
//! the window itself), the paced load with every request marked, then every upstream's record
//! of the trial read back, and every upstream reset.

use std::time::Duration;

use super::plan::{BehaviourPlan, Fault, Scenario, STALL};
use super::requests::Requests;
use crate::engine::logged::{drive, Load, Sent};
use crate::engine::steering::{Arrival, Change, Upstream};
use crate::model::target::Target;

/// How long before the load starts the window is asked for: the load's own lead and the
/// time to build its runtime.
const LEAD_MS: u64 = 25;

/// What one trial gave.
#[derive(Debug, Clone)]
pub struct Observed {
    pub sent: Vec<Sent>,
    /// `CLOCK_MONOTONIC` ns of the load's start and end (the last request due).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Each upstream's arrivals in the trial, in the plan's order.
    pub arrivals: Vec<Vec<Arrival>>,
    /// The window the first upstream was steered for, `CLOCK_MONOTONIC` ns; `None` when the
    /// scenario steers nothing.
    pub window: Option<(u64, u64)>,
    /// Arrivals lost from a mock's record before they were read.
    pub dropped: u64,
}

/// The change the scenario makes to the first upstream, from `after_ms` on.
pub fn change(plan: &BehaviourPlan, after_ms: u64) -> Option<Change> {
    let for_ms = Some(plan.window.as_millis() as u64);
    let mut change = Change {
        after_ms,
        for_ms,
        ..Change::default()
    };
    match plan.scenario {
        Scenario::Cache | Scenario::Limits => return None,
        Scenario::Balance => {
            let slow = format!("{}ms", plan.slow.as_millis());
            (change.latency, change.ttft) = (Some(slow.clone()), Some(slow));
        }
        Scenario::Failover | Scenario::Retries => match &plan.fault {
            Fault::Status(code) => change.faults = vec![format!("{code}:100%")],
            Fault::Refuse => change.refuse = true,
            Fault::Stall => {
                (change.latency, change.ttft) = (Some(STALL.into()), Some(STALL.into()))
            }
            Fault::Cut => change.faults = vec!["reset@5:100%".into()],
        },
    }
    Some(change)
}

/// Runs trial `trial` (numbering its requests apart from every other trial's) on `gateway`.
pub fn run_trial(
    plan: &BehaviourPlan,
    gateway: &Target,
    requests: &Requests,
    first_seq: u64,
) -> Result<Observed, String> {
    let upstreams: &[Upstream] = &plan.upstreams;
    let marks = upstreams
        .iter()
        .map(Upstream::mark)
        .collect::<Result<Vec<_>, _>>()?;
    let before_ms = plan.before.as_millis() as u64;
    let window = match change(plan, before_ms + LEAD_MS) {
        Some(change) => {
            let state = upstreams[0].steer(&change)?;
            let now = gatebench_shared::clock::monotonic_ns();
            let from = state
                .since_ns
                .unwrap_or(now + (before_ms + LEAD_MS) * 1_000_000);
            let until = state
                .until_ns
                .unwrap_or(from + plan.window.as_nanos() as u64);
            Some((from, until))
        }
        None => None,
    };
    let picks = &requests.picks;
    let pick = |k: u64| picks.get(k as usize).copied().unwrap_or(0);
    let load = Load {
        target: gateway,
        transport: &plan.transport,
        spec: &plan.spec,
        templates: &requests.templates,
        pick: &pick,
        rate: plan.rate,
        count: plan.count(),
        first_seq,
        timeout: plan.timeout,
        connections: 512,
    };
    let driven = drive(&load);
    // Whatever the load gave, the mocks go back to how they started before anything else.
    let reset: Vec<String> = upstreams.iter().filter_map(|u| u.reset().err()).collect();
    let driven = driven?;
    if let Some(problem) = reset.first() {
        return Err(problem.clone());
    }
    // Answers a gateway still sends on after the client's timeout are not waited for; a
    // retry in flight lands within this pause.
    std::thread::sleep(Duration::from_millis(200));
    let mut arrivals = Vec::with_capacity(upstreams.len());
    let mut dropped = 0;
    for (u, since) in upstreams.iter().zip(marks) {
        let record = u.record(since)?;
        dropped += record.dropped;
        arrivals.push(record.arrivals);
    }
    let end_ns =
        driven.start_ns + ((plan.count().saturating_sub(1)) as f64 * 1e9 / plan.rate) as u64;
    Ok(Observed {
        sent: driven.sent,
        start_ns: driven.start_ns,
        end_ns,
        arrivals,
        window,
        dropped,
    })
}
