//! The versioned JSON result of `loadgen ladder`: each rung of simultaneous streams per target.

use crate::model::target::Named;
use crate::results::comparison::ComparisonFooter;
use crate::results::plan::PlanRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.ladder/1";

/// One target at one level.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rung {
    pub level: usize,
    pub name: crate::model::role::Role,
    pub completed: usize,
    pub failed: usize,
    pub errors: BTreeMap<String, u64>,
    /// From the common start instant, µs.
    #[serde(deserialize_with = "nan_if_null")]
    pub ttft_p50_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ttft_p95_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub e2e_p50_us: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub e2e_p95_us: f64,
    /// Output events per completed stream (median, min, max).
    #[serde(deserialize_with = "nan_if_null")]
    pub chunks_p50: f64,
    pub chunks_min: u64,
    pub chunks_max: u64,
    /// Median time from the first output event to the last, µs.
    #[serde(deserialize_with = "nan_if_null")]
    pub spread_p50_us: f64,
    /// Against the direct target at this level: `passed through`, `re-chunked`, `buffered`
    /// (or `-` for direct itself).
    pub delivery: String,
    /// Time to write all N requests, µs (the "instant" is this wide).
    pub send_window_us: f64,
    /// Connections opened for the rung (N when every one could be).
    #[serde(default)]
    pub connections_opened: u64,
}

/// The versioned JSON result of `loadgen ladder`.
#[derive(Debug, Serialize, Deserialize)]
pub struct LadderResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    /// The request options (its `targets` are empty: see `targets`).
    #[serde(default)]
    pub plan: PlanRecord,
    pub targets: Vec<Named>,
    /// The direct target's configuration (TOML) when it is a gatebench mock.
    #[serde(default)]
    pub mock: Option<String>,
    /// The pause after each rung (--settle), µs.
    #[serde(default)]
    pub settle_us: u64,
    pub rungs: Vec<Rung>,
    /// The processes sampled, and whether the figures can be trusted.
    #[serde(flatten)]
    pub footer: ComparisonFooter,
}

/// A statistic of no stream (every one failed) is NaN, written as JSON `null`; read it back
/// the same way.
pub(crate) fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize as _;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
