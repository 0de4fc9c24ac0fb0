//! Options of `loadgen behaviour`: the scenario, the gateways and the mocks behind them (by
//! their control listeners), the load, the fault and its window, what each scenario needs
//! (repeats, keys and a limit, weights and a slow upstream), and what each request carries.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::RequestFlags;

/// Options of `loadgen behaviour`.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct BehaviourArgs {
    /// What to measure: failover, retries, cache, limits or balance.
    #[arg(value_name = "SCENARIO")]
    pub behaviour: String,
    /// A gateway to measure: NAME=URL (repeatable; each measured in turn).
    #[arg(long = "gateway")]
    #[serde(default, rename = "gateway")]
    pub gateways: Vec<String>,
    /// A gatebench mock behind the gateways: NAME=URL of its control listener (the mock run
    /// with --control 127.0.0.1:PORT --record N), in the order the gateways are configured with
    /// them: the first is the one made to fail, throttle or slow down (repeatable).
    #[arg(long = "upstream")]
    #[serde(default, rename = "upstream")]
    pub upstreams: Vec<String>,
    /// Requests per second sent to each gateway. Default 100.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Trials per gateway, each figure's interval is over them. Default 3.
    #[arg(long)]
    pub trials: Option<usize>,
    /// What the first upstream does in its window: 503, 500, 502, 504, 529, 429 (with retry-after),
    /// refuse (its listener closed), stall (answers after 10 s) or cut (streams broken after
    /// 5 events). Default 503 (retries: 429).
    #[arg(long)]
    pub fault: Option<String>,
    /// Load before the window, like 2s. Default 2s.
    #[arg(long)]
    pub before: Option<String>,
    /// Length of the window in which the first upstream fails (or throttles, or is slow), like
    /// 3s. Default 3s (balance: 4s).
    #[arg(long)]
    pub window: Option<String>,
    /// Load after the window, like 4s. Default 4s.
    #[arg(long)]
    pub after: Option<String>,
    /// A quiet gap: the gateway has stopped sending to a failing upstream at its last arrival
    /// before a gap this long with none. Default 500ms.
    #[arg(long)]
    pub gap: Option<String>,
    /// cache: distinct prompts, sent in a seeded order so each is repeated (rate × time /
    /// repeats times on average). Default 10.
    #[arg(long)]
    pub distinct: Option<usize>,
    /// limits: API keys the load is spread over, round robin (sent as
    /// `authorization: Bearer gb-key-K`). Default 4.
    #[arg(long)]
    pub keys: Option<usize>,
    /// limits: the limit the gateway is configured with, per key, like 60/min or 2/s.
    #[arg(long)]
    pub limit: Option<String>,
    /// balance: the weights the gateway is configured with, NAME=W,NAME=W. Default equal.
    #[arg(long)]
    pub weights: Option<String>,
    /// balance: the latency the first upstream gets in its window, like 200ms. Default 200ms.
    #[arg(long)]
    pub slow: Option<String>,
    /// Pause between trials, like 1s. Default 1s.
    #[arg(long)]
    pub settle: Option<String>,
    /// Where each request's mark goes: both (the x-gatebench-seq header and the body's user
    /// field, for gateways that drop client headers) or header. Default both (cache: header,
    /// since a mark in the body makes every prompt new to a cache).
    #[arg(long)]
    pub mark: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub request: RequestFlags,
    /// Write the result (JSON) here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress lines.
    #[arg(long)]
    #[serde(default)]
    pub quiet: bool,
}
