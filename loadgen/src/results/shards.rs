//! What a merged result (`loadgen merge`) says of the shards it was added from: each shard's
//! file, host, start and clock, and its share of the load.

use gatebench_shared::host::HostFacts;
use serde::{Deserialize, Serialize};

use crate::results::capacity::Judged;
use crate::results::clock::ClockFacts;

/// The shards of a merged result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shards {
    /// The plan's shard count (`--shard I/N`: N).
    pub count: u64,
    /// What the merge could not add, and what it doubts of the shards' clocks.
    #[serde(default)]
    pub notes: Vec<String>,
    pub merged: Vec<ShardRow>,
    /// The thresholds the merged run was judged by (`--max-p99`, `--max-error-rate`, `--slo`),
    /// each with what the whole run measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<Judged>,
    /// Every shard of the plan that was not merged (`--partial`), and why, as the runner that
    /// collected the shards said (`--absent`) or "no result given".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<AbsentShard>,
}

/// A shard the merge has no result of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbsentShard {
    pub index: u64,
    pub why: String,
}

/// One shard as the merged result lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardRow {
    pub file: String,
    pub index: u64,
    #[serde(default)]
    pub command: Vec<String>,
    pub host: HostFacts,
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub threads: usize,
    #[serde(default)]
    pub connections: usize,
    #[serde(default)]
    pub target_resolved: String,
    pub clock: ClockFacts,
    pub requests: u64,
    #[serde(default)]
    pub ok: u64,
    #[serde(default)]
    pub failed: u64,
    pub achieved_rate: f64,
    pub generator_cpu_cores: f64,
    pub valid: bool,
}
