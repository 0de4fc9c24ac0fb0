//! The versioned JSON result of a run: what was measured and everything needed to judge it.
//!
//! The shape is described by `loadgen/result.schema.json`, checked by the tests.

use std::collections::BTreeMap;

use gatebench_shared::host::{HostFacts, OpenFileLimit};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::intervals::Series;
use crate::plan::{Plan, Target};
use crate::recorder::{Metric, SecondSummary};
use crate::start_at::ClockFacts;

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.result/1";

/// A whole invocation: one run per target and scenario.
#[derive(Debug, Serialize)]
pub struct RunResult {
    pub schema: &'static str,
    pub gatebench_version: &'static str,
    pub command: Vec<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub host: HostFacts,
    pub open_files: Option<OpenFiles>,
    pub plan: Plan,
    /// The mock's configuration (TOML): the embedded one of the demo, or the first target's
    /// when it is a gatebench mock (read from `GET /v1/gatebench/config`).
    pub mock: Option<String>,
    pub runs: Vec<TargetRun>,
    /// True when every run is valid.
    pub valid: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct OpenFiles {
    pub soft: u64,
    pub hard: u64,
}

impl From<OpenFileLimit> for OpenFiles {
    fn from(l: OpenFileLimit) -> Self {
        OpenFiles {
            soft: l.soft,
            hard: l.hard,
        }
    }
}

/// One target under one scenario.
#[derive(Debug, Serialize)]
pub struct TargetRun {
    pub target: Target,
    pub scenario: String,
    pub stream: bool,
    /// Measured window, seconds (shorter than planned when interrupted).
    pub duration_s: f64,
    pub warmup_requests: u64,
    pub requests: u64,
    pub ok: u64,
    pub failed: u64,
    pub success_rate: f64,
    /// Requests dispatched whose intended start fell in the measured window.
    pub dispatched: u64,
    /// The window the achieved rate is over, seconds: the measured window, or longer when the
    /// generator dispatched its last request after the window closed.
    pub dispatch_window_s: f64,
    /// Requests dispatched per second of the measured window.
    pub achieved_rate: f64,
    /// Successful responses per second of the measured window.
    pub throughput: f64,
    pub errors: BTreeMap<String, u64>,
    pub connections_opened: u64,
    pub connections_reused: u64,
    pub pinned_cores: Vec<usize>,
    /// CPU the generator's workers used, in cores (1.0 = one core busy), over the run.
    pub generator_cpu_cores: f64,
    pub interrupted: bool,
    pub metrics: BTreeMap<&'static str, Summary>,
    /// The full histograms behind `metrics`: in the JSON as compressed V2 histograms in base64,
    /// so results can be merged (`loadgen merge`) and re-analysed exactly.
    #[serde(serialize_with = "encoded_histograms")]
    pub histograms: Vec<(Metric, Histogram<u64>)>,
    /// Each metric's histogram per second, kept for `--hdr-log` (not in the JSON).
    #[serde(skip)]
    pub per_second: Option<Vec<(Metric, Series)>>,
    /// When the run's clock started, and what this host's clock says of itself.
    pub clock: ClockFacts,
    pub timeline: Vec<SecondSummary>,
    pub validity: Validity,
    /// With `--upstream-metrics`: requests the upstream saw against requests sent.
    pub upstream: Option<crate::upstream::UpstreamCheck>,
}

fn encoded_histograms<S: serde::Serializer>(
    histograms: &[(Metric, Histogram<u64>)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(histograms.len()))?;
    for (metric, h) in histograms {
        map.serialize_entry(metric.name(), &crate::hdr_codec::encode(h))?;
    }
    map.end()
}

/// Why a run's figures cannot be trusted, by the rules every run and every merge of shards is
/// judged by: nothing succeeded; the achieved rate is more than 1% under `target_rate` (open
/// loop); the schedule lag p99 is over 1 ms.
pub fn generator_reasons(
    ok: u64,
    achieved_rate: f64,
    target_rate: Option<f64>,
    lag_p99_us: u64,
) -> Vec<String> {
    let mut reasons = Vec::new();
    if ok == 0 {
        reasons.push(
            "no request succeeded in the measured window: there is nothing to measure".into(),
        );
    }
    if let Some(rate) = target_rate {
        if achieved_rate < rate * 0.99 {
            reasons.push(format!(
                "the generator did not keep up: achieved {achieved_rate:.1} req/s, more than 1% \
                 under the target {rate} req/s"
            ));
        }
        if lag_p99_us > 1_000 {
            reasons.push(format!(
                "schedule lag p99 is {lag_p99_us} us, over 1 ms: the generator's own timing \
                 error is too large for these figures"
            ));
        }
    }
    reasons
}

/// Whether the generator kept up, and if not, why.
#[derive(Debug, Clone, Serialize)]
pub struct Validity {
    pub valid: bool,
    pub reasons: Vec<String>,
}

/// A histogram's summary. Times in microseconds (counts for output_chunks and output_tokens).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

impl Summary {
    pub fn of(h: &Histogram<u64>) -> Summary {
        Summary {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            stdev: h.stdev(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p95: h.value_at_quantile(0.95),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

/// The metrics a run reports: all for streams; the stream-only ones are left out otherwise.
pub fn reported(stream: bool) -> impl Iterator<Item = Metric> {
    Metric::ALL.into_iter().filter(move |m| {
        stream
            || !matches!(
                m,
                Metric::Ttft
                    | Metric::TtftService
                    | Metric::Itl
                    | Metric::Tpot
                    | Metric::OutputChunks
                    | Metric::OutputTokens
            )
    })
}

/// The metrics kept per second for interval logs: the reported ones, with `--hdr-log`.
pub fn logged(plan: &Plan) -> Vec<Metric> {
    match plan.hdr_log {
        Some(_) => reported(plan.request.stream).collect(),
        None => Vec::new(),
    }
}
