//! `loadgen profile --memory`: a gateway's allocations under a steady load, counted at the
//! edges of each probed run's measured window from the best source its runtime has, divided by
//! the requests the window completed; where the bytes went (stacks weighted by bytes); and its
//! memory at rest before and after the load.
//!
//! - `reading`: what one source reads at a window's edge, and the difference of two readings.
//! - `go`: Go's runtime counters (a Prometheus `go_memstats_*` page) and heap profile (pprof).
//! - `node`: V8's sampling heap profiler, read from the endpoint `scripts/gateways/lib/v8-heap.js`
//!   serves inside the gateway.

pub mod go;
pub mod node;
pub mod reading;
