//! Options of `loadgen sweep`: the levels and their kind, over those of `compare`.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::CompareArgs;

/// Options of `loadgen sweep`: those of `loadgen compare`, and the levels.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct SweepArgs {
    /// Load levels, comma-separated. Default 1,4,16,64,256.
    #[arg(long)]
    #[serde(default, deserialize_with = "super::preset::text_or_list")]
    pub levels: Option<String>,
    /// What the levels are: concurrency (closed loop) or rate (open loop, requests per second).
    /// Default concurrency.
    #[arg(long, value_enum)]
    pub level_kind: Option<LevelKind>,
    #[command(flatten)]
    #[serde(flatten)]
    pub compare: CompareArgs,
}

/// What a sweep's levels are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LevelKind {
    /// Closed loop: requests in flight.
    #[default]
    Concurrency,
    /// Open loop: requests per second.
    Rate,
}

/// Trials per level and target when `--trials` is not given.
pub const DEFAULT_TRIALS: usize = 3;

/// The levels when none are given.
pub const DEFAULT_LEVELS: &str = "1,4,16,64,256";

impl LevelKind {
    /// The name flags, presets and results use.
    pub fn name(self) -> &'static str {
        match self {
            LevelKind::Concurrency => "concurrency",
            LevelKind::Rate => "rate",
        }
    }
}

impl std::fmt::Display for LevelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
