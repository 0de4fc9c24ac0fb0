//! `loadgen profile --memory`: a gateway's allocations under a steady load, counted at the
//! edges of each probed run's measured window from the best source its runtime has, divided by
//! the requests the window completed; where the bytes went (stacks weighted by bytes); and its
//! memory at rest before and after the load. The sources' drivers are the engine's
//! (`engine::profiler`); this folder holds the command's plan, its flow and its result.
//!
//! - `plan`: `--memory` and its flags checked into one plan.
//! - `run`: the command's flow.
//! - `figures`: counts per request with intervals, and the modeled cost.
//! - `files`: the stacks and their flame graphs written beside the result.

mod figures;
mod files;
mod plan;
mod run;

pub use plan::MemoryPlan;
pub use run::run;
