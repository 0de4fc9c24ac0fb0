//! What the result of every comparison (`compare`, `sweep`, and `profile` through `compare`'s)
//! says of its set-up before its figures: the load, the targets, the twin and how the
//! resolution was obtained, the trials. Each result flattens it right after its envelope, so
//! the fields stand at the top of the JSON file as they always have.

use crate::model::target::Named;
use crate::results::plan::PlanRecord;
use serde::{Deserialize, Serialize};

/// A comparison's set-up, as its result records it.
#[derive(Debug, Serialize, Deserialize)]
pub struct ComparisonHeader {
    /// The load of every trial (a sweep's: its first level's); its `targets` are empty: see
    /// `targets`.
    #[serde(default)]
    pub plan: PlanRecord,
    pub targets: Vec<Named>,
    /// True when the second target is the twin (`--twin`), the A/A control.
    #[serde(default)]
    pub twin: bool,
    /// How the resolution was obtained: the twin's disclosure (`--twin URL`, a second mock
    /// process started by loadgen, the direct URL again and why), or why there is none.
    #[serde(default)]
    pub resolution_source: String,
    /// `--min-effect`, µs (0 when not given).
    #[serde(default)]
    pub min_effect_us: f64,
    /// The direct target's configuration (TOML) when it is a gatebench mock.
    #[serde(default)]
    pub mock: Option<String>,
    pub trials: usize,
    /// The pause before each trial after the first (--settle), µs.
    #[serde(default)]
    pub settle_us: u64,
}
