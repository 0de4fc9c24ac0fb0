//! The versioned JSON result of a run: what was measured and everything needed to judge it,
//! written and read back as itself.
//!
//! The shape is described by `loadgen/result.schema.json`, checked by the tests.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::results::breakdown::{GroupSummary, SecondSummary};
use crate::results::clock::ClockFacts;
use crate::results::metric::{Metric, Summary};
use crate::results::validity::Validity;

use crate::model::target::Target;
use crate::results::plan::PlanRecord;
use crate::results::series::Series;
use crate::results::shards::Shards;

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.result/1";

/// A whole invocation: one run per target and scenario.
#[derive(Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    #[serde(default)]
    pub plan: PlanRecord,
    /// The mock's configuration (TOML): the embedded one of the demo, or the first target's
    /// when it is a gatebench mock (read from `GET /v1/gatebench/config`).
    #[serde(default)]
    pub mock: Option<String>,
    pub runs: Vec<TargetRun>,
    /// True when every run is valid.
    pub valid: bool,
    /// In a merged result (`loadgen merge`): the shards it was added from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<Shards>,
}

/// How a run's connections were opened. Connections opened ahead of the start are counted
/// here and in no request; one opened during the run (to replace one the server closed, or
/// over the ones opened ahead) is also in the response time of the request that waited for it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConnectFacts {
    /// `HTTP/1.1` or `HTTP/2` (empty in results older than TLS and HTTP/2 in loadgen).
    pub protocol: String,
    /// TLS over the connections (an `https://` target).
    pub tls: bool,
    /// The TCP connects, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_connect_us: Option<Summary>,
    /// The TLS handshakes after them, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_handshake_us: Option<Summary>,
    /// When a body's bytes are timed: `socket_read` (as they come off the socket, over
    /// HTTP/1.1 and HTTP/2 alike), or in results of builds before HTTP/2 had a client of
    /// its own, `frame_delivered` (HTTP/2: when the connection's task handed their frame to the
    /// request's, a few µs later on a busy core).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body_timed_at: String,
}

/// One target under one scenario.
#[derive(Debug, Serialize, Deserialize)]
pub struct TargetRun {
    pub target: Target,
    pub scenario: String,
    #[serde(default)]
    pub stream: bool,
    /// Measured window, seconds (shorter than planned when interrupted).
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default)]
    pub warmup_requests: u64,
    pub requests: u64,
    pub ok: u64,
    pub failed: u64,
    pub success_rate: f64,
    /// Requests dispatched whose intended start fell in the measured window.
    #[serde(default)]
    pub dispatched: u64,
    /// The window the achieved rate is over, seconds: the measured window, or longer when the
    /// generator dispatched its last request after the window closed.
    #[serde(default)]
    pub dispatch_window_s: f64,
    /// Requests dispatched per second of the measured window.
    pub achieved_rate: f64,
    /// Successful responses per second of the time the window's requests took to complete:
    /// over the span from the first of them to end to the last (the completions after the
    /// first, per second of it), or per second of the window with fewer than two. A target
    /// that falls behind finishes its share late, so this is its real goodput, not the planned
    /// rate; `achieved_rate` is what was sent.
    pub throughput: f64,
    /// The span `throughput` is over, seconds (the window, with fewer than two completions).
    #[serde(default)]
    pub completion_window_s: f64,
    /// The timeline's steady state: the median of its seconds' successful completions, the
    /// first and last second left out (ramp and drain); `None` with fewer than three seconds.
    #[serde(default)]
    pub steady_throughput: Option<f64>,
    #[serde(default)]
    pub errors: BTreeMap<String, u64>,
    #[serde(default)]
    pub connections_opened: u64,
    #[serde(default)]
    pub connections_reused: u64,
    /// The protocol spoken, and how long opening the connections took.
    #[serde(default)]
    pub connect: ConnectFacts,
    #[serde(default)]
    pub pinned_cores: Vec<usize>,
    /// CPU the generator's workers used, in cores (1.0 = one core busy), from the start line
    /// to the end of the drain.
    #[serde(default)]
    pub generator_cpu_cores: f64,
    /// CPU the workers used before the start line (opening connections, calibrating their
    /// pacers), in seconds of one core; `None` in results from before it was counted apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_setup_cpu_s: Option<f64>,
    /// The pacer's margin, the lateness of its wake-ups and the time it spun, over the
    /// workers (`None`: a closed loop, or a result from before `--spin auto`).
    #[serde(default)]
    pub pacer: Option<crate::results::pacing::WakeReport>,
    /// The time the workers spent polling for due answers, and their budget (`None`: a result
    /// from before answers were polled for).
    #[serde(default)]
    pub answer_poll: Option<crate::results::pacing::AnswerPollReport>,
    #[serde(default)]
    pub interrupted: bool,
    pub metrics: BTreeMap<String, Summary>,
    /// The full histograms behind `metrics`: in the JSON as compressed V2 histograms in base64,
    /// so results can be merged (`loadgen merge`) and re-analysed exactly.
    #[serde(default, with = "encoded_histograms")]
    pub histograms: Vec<(Metric, Histogram<u64>)>,
    /// Each metric's histogram per second, kept for `--hdr-log` (not in the JSON).
    #[serde(skip)]
    pub per_second: Option<Vec<(Metric, Series)>>,
    /// When the run's clock started, and what this host's clock says of itself.
    #[serde(default)]
    pub clock: ClockFacts,
    #[serde(default)]
    pub timeline: Vec<SecondSummary>,
    pub validity: Validity,
    /// With `--upstream-metrics`: requests the upstream saw against requests sent.
    #[serde(default)]
    pub upstream: Option<UpstreamCheck>,
    /// Per class of the corpus's requests, when its lines name classes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<GroupSummary>,
    /// Per stage of `--stages`, by each request's intended start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<GroupSummary>,
    /// Per turn and per session, when the run sent sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::results::sessions::SessionsResult>,
}

impl TargetRun {
    /// The scenario, with the protocol when it is not HTTP/1.1 in the clear.
    pub fn scenario_shown(&self) -> String {
        let c = &self.connect;
        if c.protocol.is_empty() {
            self.scenario.clone()
        } else if c.tls {
            format!("{} ({} over TLS)", self.scenario, c.protocol)
        } else if c.protocol != "HTTP/1.1" {
            format!("{} ({})", self.scenario, c.protocol)
        } else {
            self.scenario.clone()
        }
    }
}

/// The counts of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamCheck {
    /// Requests the upstream counted during the run (its API routes; not /metrics or /health).
    pub seen: u64,
    /// Requests loadgen wrote (warm-up included; those that never connected excluded).
    pub sent: u64,
    pub matches: bool,
}

/// A run's histograms in the JSON: a map from each metric's name to its compressed V2
/// encoding in base64.
mod encoded_histograms {
    use hdrhistogram::Histogram;
    use serde::de::Error as _;
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::results::hdr_codec::{decode, encode};
    use crate::results::metric::Metric;

    pub fn serialize<S: Serializer>(
        histograms: &[(Metric, Histogram<u64>)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(histograms.len()))?;
        for (metric, h) in histograms {
            map.serialize_entry(metric.name(), &encode(h))?;
        }
        map.end()
    }

    /// Metrics this build does not know are left out.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(Metric, Histogram<u64>)>, D::Error> {
        let encoded = std::collections::BTreeMap::<String, String>::deserialize(d)?;
        let mut out = Vec::new();
        for metric in Metric::ALL {
            if let Some(text) = encoded.get(metric.name()) {
                let h = decode(text)
                    .map_err(|e| D::Error::custom(format!("{}: {e}", metric.name())))?;
                out.push((metric, h));
            }
        }
        Ok(out)
    }
}

/// The median of a timeline's per-second successful completions, its first and last second
/// (ramp and drain) left out; `None` with fewer than three seconds.
pub fn steady_throughput(timeline: &[SecondSummary]) -> Option<f64> {
    if timeline.len() < 3 {
        return None;
    }
    let inner: Vec<f64> = timeline[1..timeline.len() - 1]
        .iter()
        .map(|s| s.ok as f64)
        .collect();
    gatebench_shared::stats::median(&inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_of_only_what_the_reports_show_reads_back() {
        let text = r#"{"schema": "gatebench.loadgen.result/1", "valid": true, "runs": [{
            "target": {"url": "http://a:80/", "resolved": "127.0.0.1:80"},
            "scenario": "chat", "requests": 1, "ok": 1, "failed": 0, "success_rate": 1.0,
            "achieved_rate": 1.0, "throughput": 1.0, "validity": {"valid": true},
            "metrics": {"response_time": {"count": 1, "p50": 5, "p90": 5, "p95": 5,
                "p99": 5, "p999": 5, "max": 5}}}]}"#;
        let result: RunResult = serde_json::from_str(text).unwrap();
        assert_eq!(result.runs[0].metrics["response_time"].p99, 5);
        assert_eq!(result.runs[0].scenario_shown(), "chat");
        assert_eq!(result.plan.shard, crate::model::load::Shard::WHOLE);
        assert!(result.shards.is_none());
    }

    #[test]
    fn the_steady_state_leaves_out_ramp_and_drain() {
        let second = |n: u64, ok: u64| SecondSummary {
            second: n,
            ok,
            ..SecondSummary::default()
        };
        assert_eq!(steady_throughput(&[second(0, 10), second(1, 90)]), None);
        let timeline = [
            second(0, 10),
            second(1, 98),
            second(2, 100),
            second(3, 101),
            second(4, 3),
        ];
        assert_eq!(steady_throughput(&timeline), Some(100.0));
    }
}
