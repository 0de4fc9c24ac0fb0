//! The profilers: one driver for each source that says where a gateway's time or memory goes,
//! each started and read at the edges of a profiled run's measured window. `loadgen profile`
//! decides which to run and what its result holds; the drivers only run and read them.
//!
//! - `perf`: on-CPU samples and the scheduler's switches (perf record, folded by inferno).
//! - `bpftrace`: the C allocator's calls counted by uprobes between loadgen's marks.
//! - `go`: Go's runtime counters (a Prometheus `go_memstats_*` page) and heap profile (pprof).
//! - `node`: V8's sampling heap profiler, read from the endpoint `scripts/gateways/lib/v8-heap.js`
//!   serves inside the gateway.
//! - `source`: which memory source a gateway's runtime has, checked before any load.
//! - `reading`: what one memory source reads at a window's edge, and the difference of two.
//! - `memory`: a memory session: the source attached or read at each probed run's edges.
//! - `rest`: resident memory sampled at rest, and growth across trials.
//! - `cpu`: the gateway's CPU in its own runs' windows.

pub mod bpftrace;
pub mod cpu;
pub mod go;
pub mod memory;
pub mod node;
pub mod perf;
pub mod reading;
pub mod rest;
pub mod source;
