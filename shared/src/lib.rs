//! What the gatebench mock and load generator must agree on.
//!
//! - [`wire`]: the providers' request and response shapes (`wire::openai` for chat completions)
//!   and the `x-gatebench-seq` header.
//! - [`latency`]: latency models (fixed, uniform, normal, lognormal; time to first token,
//!   inter-token gap, output length), drawn as a pure function of `(seed, request ordinal)`.
//! - [`settings`]: helpers for the mock's config file and loadgen's profiles.
//! - [`stats`]: medians, seeded bootstrap intervals and t intervals for overhead figures.
//! - [`host`]: facts about the machine, and the open-file limit raised for a server or client.
//! - [`clock`] / [`timerfd`]: `CLOCK_MONOTONIC`, and the kernel timer armed on it at absolute
//!   deadlines.

pub mod clock;
pub mod errors;
pub mod host;
pub mod latency;
pub mod settings;
pub mod stats;
pub mod timerfd;
pub mod trials;
pub mod wire;

pub use latency::{Distribution, LatencyModel, RequestDraw, SpecError, TokenCount};
