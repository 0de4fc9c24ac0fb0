//! What a search does to its target, behind one interface: run a step at a rate, send one
//! request alone (a probe), pause. [`Live`] does it on the wire and the real clock; tests give
//! the search a simulated target on simulated time in its place.

use std::sync::Arc;
use std::time::Duration;

use super::CapacityPlan;
use crate::engine::run::run_target;
use crate::generator::plan::Plan;
use crate::generator::worker::probe;
use crate::model::load::Load;
use crate::model::target::Named;
use crate::results::run::TargetRun;
use crate::wire::outcome::ErrorKind;

/// One request alone: how long it took from its send (or, failed, from the probe's start),
/// and why it failed, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    pub took: Duration,
    pub error: Option<ErrorKind>,
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
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let got = match runtime {
            Ok(runtime) => tokio::task::LocalSet::new()
                .block_on(&runtime, probe(&self.target.target, &self.cp.plan)),
            Err(_) => Err(ErrorKind::Connect),
        };
        match got {
            Ok(ns) => Probe {
                took: Duration::from_nanos(ns),
                error: None,
            },
            Err(kind) => Probe {
                took: started.elapsed(),
                error: Some(kind),
            },
        }
    }

    fn pause(&mut self, d: Duration) {
        crate::engine::comparison::pause(d);
    }
}
