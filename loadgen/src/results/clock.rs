//! What a run's clock said of itself: when it started against `--start-at`, the kernel's view
//! of its discipline (NTP), and its offset from a reference clock (`--clock-ref`).

use serde::{Deserialize, Serialize};

/// When a run's clock started, against the instant it was asked to start at.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClockFacts {
    /// `--start-at`, RFC 3339 (null without it).
    pub start_at: Option<String>,
    /// Wall-clock time of the run's zero (the first slot of the schedule), µs since the epoch.
    #[serde(default)]
    pub started_unix_us: i64,
    /// Zero − `--start-at` by this host's clock, µs (positive: late); null without it.
    pub start_error_us: Option<i64>,
    /// What the kernel reports of this host's clock discipline (NTP), when it reports it.
    pub kernel: Option<KernelClock>,
    /// With `--clock-ref`: this host's clock against the reference, measured just before the
    /// start.
    #[serde(default)]
    pub reference: Option<ReferenceClock>,
}

/// The kernel's view of its clock discipline (`adjtimex(2)`, read only).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelClock {
    /// False when the kernel marks the clock unsynchronised (no NTP daemon disciplines it, or
    /// it lost its source): then its offset from other hosts is unknown.
    pub synchronized: bool,
    /// The offset the discipline last measured and is still correcting, µs.
    pub offset_us: f64,
    /// Estimated error, µs.
    pub est_error_us: i64,
    /// Maximum error, µs.
    pub max_error_us: i64,
}

/// How far this host's clock was from the reference's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReferenceClock {
    /// The reference (`--clock-ref`).
    pub url: String,
    /// Reference − this host's clock, µs: add it to a time of this host to get the reference's.
    pub offset_us: i64,
    /// Half the shortest round trip, µs: the offset is known to within this.
    pub error_us: i64,
}
