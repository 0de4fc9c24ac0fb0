//! The load options of every command with a load: all of `loadgen run`'s, and the load of
//! `compare`, `sweep`, `ladder`, `capacity` and `profile`; every one a flag and a preset key;
//! flags win over the preset.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::RequestFlags;

/// The load options (all of `loadgen run`'s, and every other command's load). Every option is
/// also a key of the `--preset` TOML file (kebab-case, like the flag); flags win over the preset.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LoadArgs {
    /// A preset: a TOML file with any of these options (kebab-case keys; flags win over it).
    /// `--profile` and `LOADGEN_PROFILE`, its former names, are still read.
    #[arg(long, alias = "profile", env = "LOADGEN_PRESET", value_name = "FILE")]
    #[serde(skip)]
    pub preset: Option<PathBuf>,
    /// URL of a target, like http://127.0.0.1:8080/v1/chat/completions (repeatable; each is run
    /// in turn). Default: an embedded mock on loopback, running the demo.
    #[arg(long = "target")]
    #[serde(default, rename = "target")]
    pub targets: Vec<String>,
    /// Requests per second, like 5000 or 5k (open loop). Default 1000.
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub rate: Option<String>,
    /// Arrival process: constant or poisson (seeded). Default constant.
    #[arg(long)]
    pub arrival: Option<String>,
    /// Closed loop instead of a rate: N in-flight requests, each sent when the last ends.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// With --concurrency: send this many measured requests (after the warm-up), then stop,
    /// instead of running for a duration.
    #[arg(long)]
    pub requests: Option<u64>,
    /// Measured duration, like 60s or 2m, or `forever` (until Ctrl-C). Default 10s.
    #[arg(long)]
    pub duration: Option<String>,
    /// Load sent before the measured duration and not counted, like 5s. Default 0.
    #[arg(long)]
    pub warmup: Option<String>,
    /// Most connections per target, opened ahead of the start and reused. Default 256.
    #[arg(long)]
    pub connections: Option<usize>,
    /// Worker threads, each with its own runtime and share of the schedule. Default 1.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Send the requests of this JSON-lines file instead of one body: each line a request body,
    /// or an envelope with `body` and optional `route` (or `url`), `headers`, `stream`,
    /// `weight` and `class`. Every line is encoded at start-up; results are broken down by
    /// class. `loadgen corpus` writes one.
    #[arg(long)]
    pub requests_file: Option<PathBuf>,
    /// How slots pick their line of --requests-file: random (seeded by --seed, each line as
    /// likely as its weight) or sequential. Default random.
    #[arg(long)]
    pub requests_order: Option<String>,
    /// Ramp the rate in stages, like 30s:1000,60s:5k,30s:0: each stage goes linearly from the
    /// last one's rate (the first from --rate, or 0) to its own over its duration (0s jumps).
    /// The stages set the duration; --warmup is their first part. Results per stage.
    #[arg(long)]
    pub stages: Option<String>,
    /// Replay a recorded trace at its instants: CSV with a header row or JSON lines, with a
    /// timestamp and input and output tokens per row (the Azure LLM inference traces'
    /// `TIMESTAMP,ContextTokens,GeneratedTokens` read as they are). Each row sends a chat
    /// request of its token counts; --scenario chat-stream streams them.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// With --trace: replay this many times faster, like 2. Default 1.
    #[arg(long)]
    pub speedup: Option<f64>,
    /// Speak HTTP/2: by ALPN (h2) to https:// targets, by prior knowledge (h2c) to http://
    /// ones. Each worker's streams are multiplexed over its share of --connections.
    #[arg(long)]
    #[serde(default)]
    pub http2: bool,
    /// Trust only the certificates of this PEM file for https:// targets, like a gatebench
    /// mock's --tls-ca-file. Default: the system's trusted certificates.
    #[arg(long)]
    pub cacert: Option<PathBuf>,
    /// Check no certificate of https:// targets (the handshake is still made, and timed).
    #[arg(long)]
    #[serde(default)]
    pub insecure: bool,
    /// Connect to another address for a host and port, HOST:PORT:ADDRESS:PORT, like
    /// api.openai.com:443:127.0.0.1:8443 (repeatable); the URL's host stays in the Host header
    /// and is TLS's server name.
    #[arg(long = "connect-to")]
    #[serde(default, rename = "connect-to")]
    pub connect_to: Vec<String>,
    /// Once sending stops (the end of --duration, or Ctrl-C), how long requests in flight
    /// may still finish, like 5s; those still open then are counted as `cancelled`. A second
    /// Ctrl-C stops waiting at once. Default: none (each request runs to its --timeout).
    #[arg(long)]
    pub grace: Option<String>,
    /// Most requests an open loop holds waiting at once (a target that stops answering leaves
    /// `rate × --timeout` of them); a request due past it is not sent and is counted as
    /// `backlog`, so the run goes on with bounded memory. Default 1000000.
    #[arg(long)]
    pub max_pending: Option<u64>,
    /// How long before each send the worker stops sleeping and spins (yielding to its own I/O):
    /// auto (learned from this machine's own wake-ups: a high percentile of how late its timer
    /// fires, measured at start and through the run), or a fixed margin like 50us (0: never
    /// spin; 1s: spin all the time, a core busy). Default auto.
    #[arg(long)]
    pub spin: Option<String>,
    /// Most CPU, in cores, the workers may spend polling for answers that are due (instead of
    /// sleeping until the kernel wakes them), like 0.5; 0 turns polling off. Default 1.
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub poll_budget: Option<String>,
    /// Send shard I of N of the schedule, like 2/4 (indexes from 0): every N-th slot from slot I,
    /// at rate/N, so N processes (on N hosts) with the same plan send the plan's schedule
    /// together. `slot:S/N` counts from 1, as Docker Swarm numbers a service's tasks. Merge
    /// their results with `loadgen merge`. Needs one --target and a rate. Also read from
    /// LOADGEN_SHARD (where an orchestrator templates only the environment).
    #[arg(long, env = "LOADGEN_SHARD")]
    pub shard: Option<String>,
    /// Start the schedule at this wall-clock instant, RFC 3339 in UTC like
    /// 2026-11-30T08:00:00Z, so shards on several hosts start together (by their own clocks;
    /// the result records what the kernel says of this host's clock). Needs one --target. Also
    /// read from LOADGEN_START_AT.
    #[arg(long, env = "LOADGEN_START_AT")]
    pub start_at: Option<String>,
    /// A gatebench mock (http://HOST:PORT) whose clock this host's is measured against just
    /// before the start (its /v1/gatebench/clock, the shortest of 8 round trips): give every
    /// shard the same one, and `loadgen merge` judges their starts on that one clock.
    #[arg(long)]
    pub clock_ref: Option<String>,
    /// Write the JSON result here (`-`: to standard output, with the report on standard error).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write one HdrHistogram percentile file (.hgrm) per metric into this directory.
    #[arg(long)]
    pub hgrm: Option<PathBuf>,
    /// Write one HdrHistogram interval log (.hlog, one histogram per second) per metric into
    /// this directory, readable by HdrHistogram's own tools and by `loadgen merge`.
    #[arg(long)]
    pub hdr_log: Option<PathBuf>,
    /// Exit 1 when more than this fraction of requests fail, like 0.01.
    #[arg(long)]
    pub max_error_rate: Option<f64>,
    /// Exit 1 when the response-time p99 exceeds this, like 50ms.
    #[arg(long)]
    pub max_p99: Option<String>,
    /// A gatebench mock's /metrics URL, read before and after each run to check that the
    /// upstream saw exactly the requests sent (a gateway that retries or caches shows).
    #[arg(long)]
    pub upstream_metrics: Option<String>,
    /// Serve the run's live counters and histograms for Prometheus at http://ADDR/metrics
    /// while it runs (requests, answers, errors by kind, response time, schedule lag, TTFT, per
    /// target and shard), like 127.0.0.1:9464; HOST:PORT+shard listens on the port plus the
    /// shard's index. Off by default. Also read from LOADGEN_METRICS_LISTEN.
    #[arg(long, env = "LOADGEN_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,
    /// Keep serving the live metrics this long after the run ends, like 3s (three scrapes at
    /// a 1 s interval), so Prometheus also scrapes the final counts; the result is written
    /// after it. 0 (the default) stops the endpoint with the run. Also read from
    /// LOADGEN_METRICS_LINGER.
    #[arg(long, env = "LOADGEN_METRICS_LINGER")]
    pub metrics_linger: Option<String>,
    /// No live progress line, even on a terminal.
    #[arg(long)]
    #[serde(default)]
    pub quiet: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub request: RequestFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub conversations: super::SessionFlags,
}
