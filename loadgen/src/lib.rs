//! An open-loop, rate-paced load generator that corrects coordinated omission.
//!
//! Every request has an intended send time from a schedule; its response time is measured from
//! that time, so a stalled target cannot hide its stall by slowing the generator down. The
//! service time from the actual send is kept beside it.
//!
//! The crate stands in layers, each importing only from the layers below it (held by
//! `tests/tests/layers.rs`, which lists the exceptions that still stand), top to bottom:
//!
//! - `commands`: one folder per command (`run`, `overhead`, `compare`, `sweep`, `ladder`,
//!   `capacity`, `profile`, `merge`, `corpus`, `report`),
//!   none importing another, each a `Command` (its plan, its execution, its options printed as
//!   a preset) that `--print-config` and `check-preset` go through; the command line (`Cli`,
//!   `CommandArgs`) stands beside its one dispatch in `commands`; `main.rs` only calls it.
//! - `report`: every rendering of every result kind (terminal, Markdown, CSV, JSON, HTML,
//!   `.hgrm`, `.hlog`, flame graphs), and writing result files whole.
//! - `engine`: running one target and its windows, stop and exit handling, setup errors,
//!   reaching and naming targets, the comparison the commands share (trials, analysis),
//!   sampling a process, the profilers' drivers (`profiler`: perf, bpftrace, Go's and V8's
//!   heap), the judge of a difference, disclosure.
//! - `generator`: schedule, rate curve, pacer, shards and start times, workers, recorder,
//!   histograms, intervals, the plan (and the load options validated into it) and the request
//!   corpus.
//! - `wire`: targets and request specs, TCP and TLS, HTTP/1.1 and HTTP/2 (each with its pool
//!   and exchange), stream parsing, the run clock, an exchange's outcome and error kinds.
//! - the three data layers: `results`, each command's versioned JSON result, the envelope every
//!   file carries and the records they hold (plain data, written and read back as itself);
//!   `options`, the commands' flags and preset keys as plain data (a flag of one meaning
//!   declared once in a group), and the one merge of flags over a preset; and `model`, what
//!   every layer works with: targets (names, roles, recording), loads and arrivals, shards.
//!
//! `fuzzing` holds entry points for the fuzz targets.

pub mod commands;
pub mod engine;
#[doc(hidden)]
pub mod fuzzing;
pub mod generator;
pub mod model;
pub mod options;
pub mod report;
pub mod results;
pub mod wire;

pub use commands::{Cli, CommandArgs};
pub use options::LoadArgs;

/// The load options' former name.
#[deprecated(note = "every command's load options are `LoadArgs`")]
pub type RunArgs = LoadArgs;
pub use results::run::RunResult;
