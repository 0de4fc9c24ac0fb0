//! What a search does to its target, behind one interface: run a step at a rate, send one
//! request alone (a probe), pause. [`Live`] does it on the wire and the real clock; tests give
//! the search a model target on simulated time in its place.

use std::sync::Arc;
use std::time::Duration;

use super::CapacityPlan;
use crate::engine::paired::{self, Timing};
use crate::engine::run::run_target;
use crate::generator::plan::Plan;
use crate::results::plan::Load;
use crate::results::run::TargetRun;
use crate::results::target::Named;
use crate::wire::clock::RunClock;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::RequestTemplate;

/// One request alone: how long it took, and whether it was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    pub took: Duration,
    pub answered: bool,
}

/// What a search does to its target.
pub(crate) trait Stepper {
    /// A step: the plan's load at `rate`, run and summarised.
    fn run(&mut self, rate: f64) -> TargetRun;
    /// One request alone, under the plan's timeout.
    fn probe(&mut self) -> Probe;
    /// Waits `d` (less when a stop is asked).
    fn pause(&mut self, d: Duration);
}

/// The plan's load at `rate`.
pub(crate) fn plan_at(plan: &Plan, rate: f64) -> Plan {
    Plan {
        load: match plan.load {
            Load::Open { arrival, .. } => Load::Open { rate, arrival },
            load => load,
        },
        ..plan.clone()
    }
}

/// A search on the wire, on the real clock.
pub(crate) struct Live<'a> {
    pub cp: &'a CapacityPlan,
    pub target: &'a Named,
}

impl Stepper for Live<'_> {
    fn run(&mut self, rate: f64) -> TargetRun {
        run_target(
            Arc::new(plan_at(&self.cp.plan, rate)),
            self.target.target.clone(),
        )
    }

    fn probe(&mut self) -> Probe {
        let started = std::time::Instant::now();
        let answered = probe_once(&self.cp.plan, self.target);
        Probe {
            took: started.elapsed(),
            answered,
        }
    }

    fn pause(&mut self, d: Duration) {
        crate::engine::comparison::pause(d);
    }
}

/// One request of the plan's to `target` on a connection of its own, over HTTP/1.1; whether
/// it was answered.
fn probe_once(plan: &Plan, target: &Named) -> bool {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return false;
    };
    let target = &target.target;
    let pool = Http1Pool::new(target.clone(), Default::default(), 1, plan.timeout);
    let template = RequestTemplate::post(target, &plan.request);
    let clock = RunClock::starting_in(Duration::ZERO);
    let how = Timing {
        timeout: plan.timeout,
        spin: false,
    };
    let call = paired::call(how, &pool, &template, &plan.request, &clock, 0, false);
    tokio::task::LocalSet::new()
        .block_on(&runtime, call)
        .is_ok()
}
