//! Options of `loadgen sweep`: the levels and their kind, over those of `compare`.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::CompareArgs;
use crate::generator::plan::PlanError;

/// Options of `loadgen sweep`: those of `loadgen compare`, and the levels.
#[derive(Debug, Clone, Default, Args)]
pub struct SweepArgs {
    /// Load levels, comma-separated. Default 1,4,16,64,256.
    #[arg(long)]
    pub levels: Option<String>,
    /// What the levels are: concurrency (closed loop) or rate (open loop, requests per second).
    /// Default concurrency.
    #[arg(long, value_enum)]
    pub level_kind: Option<LevelKind>,
    #[command(flatten)]
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
    /// The kind a sweep runs: the flag's, else the profile's (`level-kind`), else the default.
    pub fn resolve(
        flag: Option<LevelKind>,
        profile: Option<String>,
    ) -> Result<LevelKind, PlanError> {
        match (flag, profile) {
            (Some(kind), _) => Ok(kind),
            (None, None) => Ok(LevelKind::default()),
            (None, Some(text)) => LevelKind::parse(&text),
        }
    }

    /// Reads a profile's `level-kind`.
    pub fn parse(text: &str) -> Result<LevelKind, PlanError> {
        <LevelKind as clap::ValueEnum>::from_str(text, false)
            .map_err(|_| PlanError::Named("--level-kind", text.to_string(), "concurrency or rate"))
    }

    /// The name flags, profiles and results use.
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
