//! An open-loop, rate-paced load generator that corrects coordinated omission.
//!
//! Every request has an intended send time from a schedule; its response time is measured from
//! that time, so a stalled target cannot hide its stall by slowing the generator down. The
//! service time from the actual send is kept beside it.
//!
//! - `options` / `plan`: every command's options (the command line, every command's flags merged
//!   over its `--profile`, the one place a profile is read, and `--print-config`), and the
//!   options validated into one immutable plan.
//! - `commands`: each command from options to exit code (compute, write, show); `main.rs` only
//!   dispatches.
//! - `schedule` / `pacer` / `shard` / `start_at` / `clock_ref`: intended send times, waiting for
//!   them precisely (timerfd, spin), a shard's part of the schedule, a start by the wall clock,
//!   and this host's clock against a reference.
//! - `worker` / `pool` / `transport` / `http1` / `http2` / `exchange` / `sse`: per-core workers,
//!   their connections (TCP or TLS, each part of opening one timed), a minimal HTTP/1.1 client
//!   that stamps every socket read, hyper's HTTP/2 client multiplexed over a few connections, one
//!   timed and validated request, stream events.
//! - `recorder` / `intervals` / `hdr_codec` / `result` / `envelope`: histograms and failures by
//!   kind, per-second histograms and their encoding, the versioned JSON result and the header
//!   every result file carries.
//! - `report` / `output`: every rendering of every result kind (terminal, Markdown, CSV, HTML,
//!   `.hgrm`, `.hlog`), and writing result files whole.
//! - `run` / `embedded` / `disclose` / `upstream`: orchestration, the demo's in-process mock, what a
//!   result discloses about its targets and host, and the upstream's own count of requests.
//! - `gateways` / `overhead` / `compare` / `sweep` / `ladder` / `merge`: the direct target, its
//!   twin and named gateways; paired rounds, alternating rate trials, load levels, simultaneous
//!   streams; shards added into one result.
//! - `profiling`: `loadgen profile`: perf on the gateway during each measured window, folded
//!   stacks and flame graphs (inferno), and the difference of two profiles.
//! - `sampler`: CPU and memory of the system under test, idle and under load.
//! - `fuzzing`: entry points for the fuzz targets.

mod breakdown;
pub mod capacity;
mod clock_ref;
pub mod commands;
pub mod compare;
pub mod corpus;
mod disclose;
mod embedded;
mod envelope;
mod exchange;
#[doc(hidden)]
pub mod fuzzing;
mod gateways;
pub mod hdr_codec;
mod http1;
mod http2;
pub mod intervals;
pub mod ladder;
pub mod merge;
pub mod options;
pub mod output;
pub mod overhead;
pub mod pace;
mod pacer;
mod plan;
mod pool;
pub mod profiling;
pub mod recorder;
pub mod report;
pub mod result;
pub mod run;
mod sampler;
mod schedule;
mod shard;
mod sse;
mod start_at;
pub mod sweep;
pub mod transport;
mod upstream;
mod worker;

pub use options::{Cli, Command, RunArgs};
pub use result::RunResult;
