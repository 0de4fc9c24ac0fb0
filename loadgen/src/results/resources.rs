//! What a sampled process or cgroup used (`--sample`): CPU and resident memory, idle before the
//! load and while it ran, with every reading.

use serde::{Deserialize, Serialize};

/// What a source used, labelled by phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResourceReport {
    pub name: String,
    /// `pid 1234 and descendants` or `cgroup PATH`.
    pub source: String,
    /// Mean CPU (cores) over the idle second before any load.
    pub idle_cpu_cores: f64,
    /// Resident memory at the end of the idle second.
    pub idle_rss_bytes: u64,
    /// Mean CPU (cores) while the load ran.
    pub load_cpu_cores_mean: f64,
    /// Highest CPU (cores) over one 250 ms interval while the load ran.
    pub load_cpu_cores_peak: f64,
    /// Highest resident memory seen while the load ran.
    pub load_rss_peak_bytes: u64,
    /// Every sample (the load started at `load_started_s`).
    pub load_started_s: f64,
    pub samples: Vec<Sample>,
}

/// One reading: seconds since sampling began, CPU seconds used so far, resident bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Sample {
    pub t_s: f64,
    pub cpu_s: f64,
    pub rss_bytes: u64,
}
