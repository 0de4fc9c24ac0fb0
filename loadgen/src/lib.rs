//! An open-loop, rate-paced load generator that corrects coordinated omission.
//!
//! Every request has an intended send time from a schedule; its response time is measured from
//! that time, so a stalled target cannot hide its stall by slowing the generator down. The
//! service time from the actual send is kept beside it.
//!
//! - `cli` / `plan`: options (flags or a TOML profile) validated into one immutable plan.
//! - `schedule` / `pacer`: intended send times, and waiting for them precisely (timerfd, spin).
//! - `worker` / `pool` / `http1` / `exchange` / `sse`: per-core workers, their connections
//!   (a minimal HTTP/1.1 client that stamps every socket read), one timed and validated request,
//!   stream events.
//! - `recorder` / `result` / `envelope` / `report` / `output`: histograms and failures by kind,
//!   the versioned JSON result and the header every result file carries, the terminal summary
//!   and `.hgrm` files, and writing result files.
//! - `run` / `embedded`: orchestration, and the demo's in-process mock.
//! - `gateways` / `overhead` / `compare` / `sweep` / `ladder`: the direct target and named
//!   gateways; paired rounds, alternating rate trials, load levels, simultaneous streams.
//! - `sampler`: CPU and memory of the system under test, idle and under load.

pub mod cli;
pub mod clock_ref;
pub mod compare;
mod disclose;
mod embedded;
pub mod envelope;
mod exchange;
#[doc(hidden)]
pub mod fuzzing;
pub mod gateways;
pub mod hdr_codec;
mod http1;
pub mod intervals;
pub mod ladder;
pub mod merge;
pub mod output;
pub mod overhead;
mod pacer;
pub mod plan;
mod pool;
pub mod profile;
pub mod recorder;
pub mod report;
pub mod result;
pub mod run;
pub mod sampler;
pub mod schedule;
pub mod shard;
mod sse;
pub mod start_at;
pub mod sweep;
mod upstream;
mod worker;

pub use cli::{Cli, Command, RunArgs};
pub use result::RunResult;
