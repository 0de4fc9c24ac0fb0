//! What the gatebench mock and load generator must agree on.
//!
//! - [`wire`]: the providers' request and response shapes (OpenAI chat, completions, Responses
//!   and embeddings, Anthropic messages, tool calls) and the `x-gatebench-seq` header.
//! - [`latency`]: latency models (fixed, uniform, normal, lognormal; time to first token,
//!   inter-token gap, output length), drawn as a pure function of `(seed, request ordinal)`.
//! - [`seeded`]: the mock's seeded draws, one stream per purpose (latency, faults, tool calls).
//! - [`duration`]: durations as people write them (`20ms`, `1.5s`) and read them (`1.25 ms`).
//! - [`settings`]: helpers for the mock's config file and loadgen's profiles.
//! - [`stats`]: medians, quantiles and seeded bootstrap intervals for overhead figures.
//! - [`trials`]: figures combined across trials (the interval across trials, Welch's t, Holm),
//!   what every verdict of `overhead`, `compare` and `sweep` rests on.
//! - [`host`]: facts about the machine, and the open-file limit raised for a server or client.
//! - [`clock`] / [`timerfd`]: `CLOCK_MONOTONIC`, and the kernel timer armed on it at absolute
//!   deadlines.
//! - [`sim`]: simulated time, the clock tests give the code that decides by time.
//! - [`wake`]: how early to wake before a deadline, learned from the thread's own wake-ups
//!   (`--spin auto` on both sides).
//! - [`errors`]: an error and its causes as one line for people.
//! - [`eventstream`]: AWS's binary event stream framing (Bedrock's `converse-stream`).
//! - [`memo`]: a thread's last reading of some bytes, so that the same bytes are read by one
//!   comparison (repeated heads and bodies on both sides).

pub mod clock;
pub mod duration;
pub mod errors;
pub mod eventstream;
pub mod host;
pub mod latency;
pub mod memo;
pub mod seeded;
pub mod settings;
pub mod sim;
pub mod stats;
pub mod timerfd;
pub mod trials;
pub mod wake;
pub mod wire;

pub use latency::{Distribution, LatencyModel, RequestDraw, SpecError, TokenCount};
