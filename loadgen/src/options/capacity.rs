//! Options of `loadgen capacity`: the SLO, the search's bounds and precision, over the targets
//! of `loadgen compare` and the load options of `loadgen run` (the search sets each run's
//! rate; it takes no twin, trials or settle).

use clap::Args;
use serde::{Deserialize, Serialize};

use super::{GatewayFlags, LoadArgs};

/// Runs per target when `--max-runs` is not given.
pub const DEFAULT_MAX_RUNS: usize = 8;
/// `--precision` when not given: the answer's two rates within 5% of each other.
pub const DEFAULT_PRECISION: f64 = 0.05;

/// Options of `loadgen capacity`.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct CapacityArgs {
    /// The objectives every run is judged by, all of which must hold, like
    /// p99<50ms,ttft_p99<500ms,errors<1%: a percentile (pNN) of response_time (the default),
    /// service_time, ttfb, ttft, itl or tpot under a duration, and failed requests under a
    /// share.
    #[arg(long)]
    pub slo: Option<String>,
    /// The first rate tried, like 500 or 2k. Default 100.
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub start_rate: Option<String>,
    /// The highest rate tried, like 50k. Default 100k.
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub max_rate: Option<String>,
    /// Stop when the highest rate that met the SLO and the lowest that did not are within
    /// this share of each other, like 0.05. Default 0.05.
    #[arg(long)]
    pub precision: Option<f64>,
    /// Most runs of the search per target. Default 8.
    #[arg(long)]
    pub max_runs: Option<usize>,
    /// After the search, run each of the two rates the answer lies between this many times
    /// again, so the answer's repeatability is on record. Default 0.
    #[arg(long)]
    pub confirm: Option<usize>,
    #[command(flatten)]
    #[serde(flatten)]
    pub targets: GatewayFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,
}
