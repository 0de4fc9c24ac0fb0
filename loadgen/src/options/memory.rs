//! Options of `loadgen profile --memory`: count the gateway's allocations in the probed runs
//! instead of sampling its CPU, from the source its runtime has, and model a cost.

use std::path::PathBuf;

use clap::Args;

/// Memory at rest is sampled this long before and after each probed run when `--rest` is not
/// given.
pub const DEFAULT_REST: &str = "2s";

/// The memory options of `loadgen profile`. In a `--preset` file the keys are the flags'
/// names; `--bpftrace` names a program of this machine and is taken from the command line only.
#[derive(Debug, Clone, Default, Args, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct MemoryArgs {
    /// Count the gateway's allocations and bytes per request in the probed runs (`NAME+memory`)
    /// instead of sampling its CPU with perf, and sample its memory at rest before and after
    /// each.
    #[arg(long)]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub memory: bool,
    /// Where the counts come from: auto (by the process's runtime), c (bpftrace uprobes on its
    /// libc's malloc, calloc, realloc and free), python (the same, for CPython started with
    /// PYTHONMALLOC=malloc), go (the runtime's counters, from --memory-url) or node (V8's
    /// sampling heap profiler, from --memory-url). Default auto.
    #[arg(long)]
    pub memory_source: Option<String>,
    /// Go: a Prometheus page with go_memstats_mallocs_total (Traefik's, Caddy's admin
    /// /metrics); Node: the endpoint scripts/gateways/lib/v8-heap.js serves in the gateway.
    #[arg(long)]
    pub memory_url: Option<String>,
    /// Go: the base of the gateway's net/http/pprof (like http://127.0.0.1:2019/debug/pprof),
    /// for the stacks of the bytes allocated (its heap profile, sampled).
    #[arg(long)]
    pub pprof_url: Option<String>,
    /// C allocator: also track each allocation until it is freed, for the bytes still live at
    /// the window's end and their stacks (return probes: about twice the cost): on or off.
    /// Default on.
    #[arg(long)]
    pub live: Option<String>,
    /// How long memory at rest is sampled before and after each probed run, like 2s. Default 2s.
    #[arg(long)]
    pub rest: Option<String>,
    /// Model a cost from the measured CPU, memory and throughput: an instance's hourly price,
    /// cores and memory, like 0.166/h,4cpu,16GiB. Printed as a model, never as a measurement.
    #[arg(long)]
    pub price: Option<String>,
    /// The bpftrace to run. Default `bpftrace` on the PATH.
    #[arg(long)]
    #[serde(skip)]
    pub bpftrace: Option<PathBuf>,
}
