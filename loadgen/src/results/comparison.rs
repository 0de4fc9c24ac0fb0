//! What the result of every comparison says around its figures. Before them, the header
//! (`compare`, `sweep`, and `profile` through `compare`'s): the load, the targets, the twin and
//! how the resolution was obtained, the trials. After them, the footer (`compare`, `sweep`,
//! `ladder`): the processes sampled, and whether the figures can be trusted. Each result
//! flattens both, so the fields stand where they always have in the JSON file.

use crate::model::target::Named;
use crate::results::plan::PlanRecord;
use crate::results::resources::ResourceReport;
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

/// What closes every comparison result (compare, sweep, ladder): the processes sampled
/// alongside, and whether its figures can be trusted. Flattened, so the fields stand at the
/// end of the JSON file as they always have.
#[derive(Debug, Serialize, Deserialize)]
pub struct ComparisonFooter {
    /// Processes sampled with --sample-pid: idle before the load, mean and peak under it.
    #[serde(default)]
    pub resources: Vec<ResourceReport>,
    pub valid: bool,
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
    #[serde(default)]
    pub interrupted: bool,
}

impl ComparisonFooter {
    /// Valid when there is no reason against it; stopped early (`interrupted`) is one, said
    /// as "interrupted before every `step` ran".
    pub fn new(
        resources: Vec<ResourceReport>,
        mut invalid_reasons: Vec<String>,
        interrupted: bool,
        step: &str,
    ) -> ComparisonFooter {
        if interrupted {
            invalid_reasons.push(format!("interrupted before every {step} ran"));
        }
        ComparisonFooter {
            resources,
            valid: invalid_reasons.is_empty(),
            invalid_reasons,
            interrupted,
        }
    }
}
