//! An open-loop, rate-paced load generator that corrects coordinated omission.
//!
//! Every request has an intended send time from a schedule; its response time is measured from
//! that time, so a stalled target cannot hide its stall by slowing the generator down. The
//! service time from the actual send is kept beside it.
//!
//! The crate stands in layers, each importing only from the layers below it (held by
//! `tests/layers.rs`), top to bottom:
//!
//! - `commands`: one module per command (`run`, `overhead`, `compare`, `sweep`, `ladder`,
//!   `capacity`, `profile` (perf sampling, in `commands::perf`), `merge`, `corpus`, `report`),
//!   each from its options to its exit code; `main.rs` only dispatches.
//! - `report`: every rendering of every result kind (terminal, Markdown, CSV, JSON, HTML,
//!   `.hgrm`, `.hlog`), and writing result files whole.
//! - `engine`: running one target and its windows, stop and exit handling, setup errors,
//!   reaching and naming targets, sampling a process, disclosure.
//! - `generator`: schedule, pace, pacer, shards and start times, workers, connection pools,
//!   recorder, histograms, intervals, the plan and the request corpus.
//! - `wire`: TCP and TLS, HTTP/1.1 and HTTP/2, one timed exchange, stream parsing.
//! - `options` and `results`, the data layers: every command's flags and profile keys, and
//!   every command's result.
//!
//! `fuzzing` holds entry points for the fuzz targets.

pub mod commands;
pub mod engine;
#[doc(hidden)]
pub mod fuzzing;
pub mod generator;
pub mod options;
pub mod report;
pub mod results;
pub mod wire;

pub use options::{Cli, Command, RunArgs};
pub use results::run::RunResult;
