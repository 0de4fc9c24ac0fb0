//! What `loadgen selftest` found this machine can measure: each figure beside its target.

use serde::{Deserialize, Serialize};

use crate::results::envelope::Envelope;

/// The result of `loadgen selftest`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SelftestResult {
    #[serde(flatten)]
    pub envelope: Envelope,
    /// How long each timed part ran, s.
    pub seconds: f64,
    /// Every figure measured, in the order printed.
    pub figures: Vec<Figure>,
    /// The smallest added latency this machine resolves: the identical twin's resolution of a
    /// median, µs (what an A/A pair of mocks measures as "added").
    pub resolution_us: Option<f64>,
    /// Whether every figure with a target met it.
    pub can_measure: bool,
    /// One sentence per missed target, naming the figure.
    pub misses: Vec<String>,
}

/// One figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figure {
    /// What was measured, like `schedule lag p99 at 5000 req/s`.
    pub name: String,
    /// The value (`unit`), or none where it could not be measured (`said` tells why).
    pub value: Option<f64>,
    pub unit: String,
    /// The target it is held to, as text (`<= 1000`, `adds latency`), or none for a figure
    /// that is the machine's own (the kernel timer, the loopback).
    pub target: Option<String>,
    /// Whether it met its target (true for a figure without one).
    pub met: bool,
    /// A verdict or a reason, where a number alone does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
}
