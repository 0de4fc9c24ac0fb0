//! `loadgen profile --memory`: a gateway's allocations under a steady load, counted at the
//! edges of each probed run's measured window from the best source its runtime has, divided by
//! the requests the window completed; where the bytes went (stacks weighted by bytes); and its
//! memory at rest before and after the load.
//!
//! - `bpftrace`: the C allocator's calls counted by uprobes between loadgen's marks.
//! - `bt_script`: the bpftrace program, each allocator call counted once.
//! - `bt_maps`: what bpftrace printed, read back into counts and stacks.
//! - `source`: which source a gateway's runtime has, checked before any load.
//! - `plan`: `--memory` and its flags checked into one plan.
//! - `session`: the source attached or read at each probed run's edges; memory at rest.
//! - `rest`: resident memory sampled at rest, and growth across trials.
//! - `cpu`: the gateway's CPU in its own runs' windows.
//! - `figures`: counts per request with intervals, and the modeled cost.
//! - `files`: the stacks and their flame graphs written beside the result.
//! - `run`: the command's flow.
//! - `reading`: what one source reads at a window's edge, and the difference of two readings.
//! - `go`: Go's runtime counters (a Prometheus `go_memstats_*` page) and heap profile (pprof).
//! - `node`: V8's sampling heap profiler, read from the endpoint `scripts/gateways/lib/v8-heap.js`
//!   serves inside the gateway.

mod bpftrace;
mod bt_maps;
mod bt_script;
mod cpu;
mod figures;
mod files;
pub mod go;
pub mod node;
mod plan;
pub mod reading;
mod rest;
mod run;
mod session;
mod source;

pub use plan::MemoryPlan;
pub use run::run;
