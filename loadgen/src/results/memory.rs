//! What `loadgen profile --memory` found: a gateway's allocations and bytes per request in each
//! probed window, with an interval across trials; where the bytes went; its memory at rest before
//! and after each load, and whether that grew from trial to trial.

use serde::{Deserialize, Serialize};

use crate::results::folded::Folded;
use gatebench_shared::stats::Interval;

/// The suffix of the probed runs' target name.
pub const PROBED: &str = "+memory";

/// The memory part of a profile result.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MemoryProfile {
    /// The source used: `c-allocator`, `python` (the C allocator under `PYTHONMALLOC=malloc`),
    /// `go-runtime` or `v8-sampling`; none when no source could be used.
    pub source: Option<String>,
    /// What the source counts, in words (calls to the C allocator, Go heap objects, V8 samples).
    pub counts: String,
    /// The tool and its version (`bpftrace v0.17.0`, the Go page read, the V8 endpoint).
    pub tool: Option<String>,
    /// The processes counted.
    pub processes: Vec<u32>,
    /// Allocations per request completed (answered 200) in the window: the mean over trials
    /// with its 95% interval (one trial: its figure as a point, `confidence` 0).
    pub allocs_per_request: Option<Interval>,
    pub bytes_per_request: Option<Interval>,
    /// Frees per request, where the source counts them.
    pub frees_per_request: Option<Interval>,
    /// loadgen's worker threads' calls to the C allocator per request in the probed windows
    /// (C allocator only): what the generator paid for the probes it shares.
    pub loadgen_allocs_per_request: Option<Interval>,
    /// Resident memory at rest before any load of the profile (before its first run).
    pub rest_before_load: Option<RestMemory>,
    /// Every probed window.
    pub trials: Vec<TrialMemory>,
    /// Bytes allocated in every window, by stack (root first); none when the source has none.
    pub allocated: Option<Folded>,
    /// Bytes allocated in the windows and still live at their ends, by stack.
    pub live: Option<Folded>,
    /// Whether memory at rest grew from trial to trial by more than the spread of its rest
    /// samples, and by how much per request.
    pub growth: Option<Growth>,
    /// Why the figures, or a part of them, are missing; empty when complete.
    pub unavailable: Vec<String>,
    /// The folded stacks (`.allocated.folded`, `.live.folded`) and their flame graphs written
    /// beside the result.
    pub files: Vec<String>,
}

/// One probed window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TrialMemory {
    pub trial: usize,
    /// Whether the window was counted (false: see the profile's `unavailable`).
    pub counted: bool,
    /// Requests the window completed (answered 200); failed ones are left out, and said.
    pub requests: u64,
    pub allocs: f64,
    pub bytes: f64,
    pub frees: Option<f64>,
    /// Calls by allocator entry point (`malloc`, `calloc`, `realloc`, `free`), for the C
    /// allocator.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub calls: std::collections::BTreeMap<String, u64>,
    /// loadgen's worker threads' calls to the C allocator in the window (the probes sit in
    /// every process that maps the gateway's libc, so a worker pays a trap for each).
    pub loadgen_allocs: Option<u64>,
    /// Bytes allocated in the window and not freed by its end, where the source tracks them.
    pub live_at_end_bytes: Option<f64>,
    /// Resident memory at rest just before the run (after its settle) and again `rest` after
    /// it ended.
    pub rest_before: Option<RestMemory>,
    pub rest_after: Option<RestMemory>,
    /// The live heap as the runtime reports it, before and after, where it does.
    pub heap_before_bytes: Option<f64>,
    pub heap_after_bytes: Option<f64>,
}

/// Resident memory sampled at rest (no load) for a while: its median and spread.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct RestMemory {
    pub samples: usize,
    pub median_rss_bytes: u64,
    pub min_rss_bytes: u64,
    pub max_rss_bytes: u64,
}

/// Growth under this is noise: 16 pages.
pub const GROWTH_FLOOR_BYTES: u64 = 64 * 1024;

/// Memory at rest from the first trial to the last.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Growth {
    /// At rest after the last probed run minus at rest after the first (medians): the first
    /// trial's growth is the gateway warming (pools, caches) and is told apart.
    pub rest_growth_bytes: i64,
    /// At rest after the first probed run minus at rest before any load.
    pub first_trial_growth_bytes: i64,
    /// What growth is noise: the widest spread (max − min) of any rest sampling, and never
    /// under [`GROWTH_FLOOR_BYTES`] (resident memory moves by pages as allocators trim).
    pub noise_bytes: u64,
    /// Whether memory at rest grew from one trial to the next (after the first) by more than
    /// the noise.
    pub flagged: bool,
    /// `rest_growth_bytes` over every request the gateway served in between (its own and its
    /// probed runs of the later trials, warm-ups included).
    pub bytes_per_request: f64,
}
