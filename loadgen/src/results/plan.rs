//! A run's plan as a result records it: the load, the request, the pace, the transport and the
//! limits, as plain data written and read back as itself. The generator's plan (which holds
//! encoded bodies, a corpus and a TLS client) becomes one with `PlanRecord::from(&plan)`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::model::load::{Load, Shard};
use crate::model::target::Target;

/// A validated run, as written in its result. A result too old to hold a plan (or some of its
/// fields) reads back with the defaults: no targets, a closed loop of 0, nothing else set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanRecord {
    /// Empty: the embedded mock and the demo.
    pub targets: Vec<Target>,
    pub load: Load,
    /// `None`: until Ctrl-C, or until `requests` are sent.
    pub duration_us: Option<u64>,
    /// Closed loop: measured requests to send, then stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(default)]
    pub warmup_us: u64,
    pub connections: usize,
    pub threads: usize,
    /// The cores the workers were pinned to (`--cores`; `pin` in files before it was named so).
    #[serde(default, alias = "pin")]
    pub cores: Vec<usize>,
    pub request: RequestRecord,
    /// Many requests instead of `request` (`--requests-file`, or a trace's rows).
    #[serde(default)]
    pub corpus: Option<CorpusSummary>,
    /// Conversations instead of single requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::results::sessions::SessionPlanRecord>,
    /// How the open loop's rate goes over time (steady, `--stages`, `--trace`).
    pub pace: PaceRecord,
    /// HTTP/1.1 or HTTP/2, the TLS settings and `--connect-to`.
    #[serde(default)]
    pub transport: TransportRecord,
    pub timeout_us: u64,
    /// How long requests in flight may still finish once sending stops; `None`: each until its
    /// timeout.
    #[serde(default)]
    pub grace_us: Option<u64>,
    /// Most requests the open loop holds waiting at once, across its workers.
    pub max_pending: u64,
    /// The pacer's fixed spin margin in µs; `None` with `--spin auto` (see `spin`).
    pub spin_us: Option<u64>,
    /// How the pacer chose its margin: `auto`, or the fixed margin (`50us`); `None` in results
    /// written before `auto`, whose margin is `spin_us`.
    #[serde(default)]
    pub spin: Option<String>,
    /// Most cores the workers could spend polling for due answers (0: none); `None` in results
    /// written before answers were polled for.
    #[serde(default)]
    pub poll_budget_cores: Option<f64>,
    pub seed: u64,
    /// The part of the schedule this process sent (`0/1`: all of it).
    #[serde(default)]
    pub shard: Shard,
    /// When the schedule starts, by the wall clock (`--start-at`), RFC 3339.
    #[serde(default)]
    pub start_at: Option<String>,
    /// A gatebench mock whose clock this host's is measured against (`--clock-ref`).
    #[serde(default)]
    pub clock_ref: Option<Target>,
    #[serde(default)]
    pub max_error_rate: Option<f64>,
    #[serde(default)]
    pub max_p99_us: Option<u64>,
    /// The upstream's `/metrics`, for the request count check.
    #[serde(default)]
    pub upstream_metrics: Option<Target>,
    /// Where the result goes (`--out`; not in the JSON).
    #[serde(skip)]
    pub out: Option<PathBuf>,
    /// Where the `.hgrm` percentile distributions go (`--hgrm`; not in the JSON).
    #[serde(skip)]
    pub hgrm: Option<PathBuf>,
    /// Where the interval logs go (`--hdr-log`; not in the JSON).
    #[serde(skip)]
    pub hdr_log: Option<PathBuf>,
}

impl PlanRecord {
    /// The rate this process sent: its shard's share of the plan's (`None` in a closed loop).
    pub fn shard_rate(&self) -> Option<f64> {
        match self.load {
            Load::Open { rate, .. } => Some(rate / self.shard.count as f64),
            Load::Closed { .. } => None,
        }
    }
}

/// What each request carries, as a result records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// `chat`, `chat-stream`, or `body` for a user-given body.
    pub scenario: String,
    pub stream: bool,
    /// The body's CRC-32 (so shards of different bodies are not merged).
    pub body_crc32: u32,
    /// Output tokens the body asks for, when known (for validation).
    pub max_tokens: Option<u64>,
    /// `Name: value`.
    #[serde(default)]
    pub headers: Vec<String>,
}

/// How slots pick their request from a corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Seeded draws, each line as likely as its weight (the same slot always draws the same).
    Random,
    /// Slot `i` sends line `i` (from the start again after the last).
    Sequential,
}

/// A corpus as a result describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusSummary {
    pub source: String,
    pub requests: usize,
    pub order: Order,
    pub classes: Vec<String>,
    /// Lines that stream.
    pub streaming: usize,
    pub body_bytes: Spread,
    /// By the 4-bytes-a-token estimate of the text.
    pub prompt_tokens: Spread,
    pub crc32: u32,
}

/// Smallest, mean and largest of a set of counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}

/// The shape of an open loop's arrivals over time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "pace", rename_all = "snake_case")]
pub enum PaceRecord {
    /// The load's rate from start to end.
    #[default]
    Steady,
    /// Linear ramps from stage to stage.
    Stages {
        start_rate: f64,
        stages: Vec<StageRecord>,
    },
    /// A recorded trace's instants.
    Trace {
        source: String,
        speedup: f64,
        rows: usize,
        /// Span from the first row to the last, after the speed-up, seconds.
        span_s: f64,
    },
}

/// One stage: from the previous stage's rate to `to_rate` over `duration_us`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    pub duration_us: u64,
    pub to_rate: f64,
}

/// The HTTP version and TLS settings of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TransportRecord {
    /// HTTP/2 instead of HTTP/1.1.
    pub http2: bool,
    /// Trust only the certificates of this PEM file (`--cacert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cacert: Option<PathBuf>,
    /// Check no certificate (`--insecure`).
    #[serde(default)]
    pub insecure: bool,
    /// `--connect-to` rules, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_to: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result written before `--pin` was named `--cores` reads back with its cores.
    #[test]
    fn a_plan_recorded_with_pin_reads_back_its_cores() {
        let mut json = serde_json::to_value(PlanRecord::default()).unwrap();
        let plan = json.as_object_mut().unwrap();
        plan.remove("cores");
        plan.insert("pin".into(), serde_json::json!([0, 1]));
        let read: PlanRecord = serde_json::from_value(json).unwrap();
        assert_eq!(read.cores, vec![0, 1]);
    }
}
