//! The versioned JSON result of a run: what was measured and everything needed to judge it.
//!
//! The shape is described by `loadgen/result.schema.json`, checked by the tests.

use std::collections::BTreeMap;

use gatebench_shared::host::OpenFileLimit;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::generator::intervals::Series;
use crate::generator::plan::Plan;
use crate::generator::recorder::{Metric, SecondSummary};
use crate::generator::start_at::ClockFacts;
use crate::results::target::Target;

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.result/1";

/// A whole invocation: one run per target and scenario.
#[derive(Debug, Serialize)]
pub struct RunResult {
    /// Format, build, command line, start, host, open-file limit.
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    pub plan: Plan,
    /// The mock's configuration (TOML): the embedded one of the demo, or the first target's
    /// when it is a gatebench mock (read from `GET /v1/gatebench/config`).
    pub mock: Option<String>,
    pub runs: Vec<TargetRun>,
    /// True when every run is valid.
    pub valid: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// How a run's connections were opened. Connections opened ahead of the start are counted
/// here and in no request; one opened during the run (to replace one the server closed, or
/// over the ones opened ahead) is also in the response time of the request that waited for it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConnectFacts {
    /// `HTTP/1.1` or `HTTP/2`.
    pub protocol: &'static str,
    /// TLS over the connections (an `https://` target).
    pub tls: bool,
    /// The TCP connects, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_connect_us: Option<Summary>,
    /// The TLS handshakes after them, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_handshake_us: Option<Summary>,
    /// When a body's bytes are timed: `socket_read` (HTTP/1.1: as they come off the socket)
    /// or `frame_delivered` (HTTP/2: when the connection's task hands their frame to the
    /// request's, a few µs later on a busy core).
    pub body_timed_at: &'static str,
}

impl ConnectFacts {
    pub fn of(
        transport: &crate::wire::transport::Transport,
        tls: bool,
        dials: &crate::wire::transport::Dials,
    ) -> Self {
        let summary = |h: &Histogram<u64>| (!h.is_empty()).then(|| Summary::of(h));
        ConnectFacts {
            protocol: transport.protocol(),
            tls,
            tcp_connect_us: summary(&dials.tcp_us),
            tls_handshake_us: summary(&dials.tls_us),
            body_timed_at: if transport.http2 {
                "frame_delivered"
            } else {
                "socket_read"
            },
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
    pub errors: BTreeMap<String, u64>,
    pub connections_opened: u64,
    pub connections_reused: u64,
    /// The protocol spoken, and how long opening the connections took.
    pub connect: ConnectFacts,
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
    pub upstream: Option<crate::engine::upstream::UpstreamCheck>,
    /// Per class of the corpus's requests, when its lines name classes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<crate::generator::breakdown::GroupSummary>,
    /// Per stage of `--stages`, by each request's intended start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<crate::generator::breakdown::GroupSummary>,
}

fn encoded_histograms<S: serde::Serializer>(
    histograms: &[(Metric, Histogram<u64>)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(histograms.len()))?;
    for (metric, h) in histograms {
        map.serialize_entry(metric.name(), &crate::generator::hdr_codec::encode(h))?;
    }
    map.end()
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

/// Schedule lag p50 above which a run is invalid: a pacer on time sends most requests within a
/// microsecond or two, so a median this late means the pacing itself was off (deadlines armed
/// on one clock and read on another crept to 71 µs over 150 s while the p99 stayed under 1 ms).
/// The same limit holds for the send delay.
pub const LAG_P50_LIMIT_US: u64 = 50;

/// The generator's own timing: when it dispatched each request against its schedule
/// (`schedule_lag`), and how long it then took to send it beyond what the target caused
/// (`send_delay`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneratorTiming<'a> {
    pub lag: Option<&'a Histogram<u64>>,
    pub send_delay: Option<&'a Histogram<u64>>,
}

/// The rate an open loop was asked for, and how far under it the achieved rate may fall by
/// the schedule's own chance.
#[derive(Debug, Clone, Copy)]
pub struct RateTarget {
    pub rate: f64,
    /// The fraction under `rate` still judged on schedule.
    pub tolerance: f64,
}

impl RateTarget {
    /// `rate` over a window of `duration_s`: evenly spaced sends must all be there (1%); a
    /// Poisson schedule's count in the window is itself random (n ± √n), so it is allowed four
    /// of its standard deviations (28% at 200 sends, 1.8% at 50,000), and a generator that fell
    /// behind is caught by its schedule lag instead.
    pub fn of(rate: f64, poisson: bool, duration_s: f64) -> RateTarget {
        let expected = (rate * duration_s).max(1.0);
        let tolerance = if poisson {
            (4.0 / expected.sqrt()).clamp(0.01, 0.5)
        } else {
            0.01
        };
        RateTarget { rate, tolerance }
    }
}

/// Why a run's figures cannot be trusted, by the rules every run and every merge of shards is
/// judged by: nothing succeeded; the achieved rate is under `target` by more than its
/// tolerance (open loop); the schedule lag or the send delay has a p99 over 1 ms or a p50 over
/// [`LAG_P50_LIMIT_US`] (open loop).
pub fn generator_reasons(
    ok: u64,
    achieved_rate: f64,
    target: Option<RateTarget>,
    timing: GeneratorTiming<'_>,
) -> Vec<String> {
    let quantiles = |h: Option<&Histogram<u64>>| {
        h.map_or((0, 0), |h| {
            (h.value_at_quantile(0.5), h.value_at_quantile(0.99))
        })
    };
    let (lag_p50_us, lag_p99_us) = quantiles(timing.lag);
    let (send_p50_us, send_p99_us) = quantiles(timing.send_delay);
    let mut reasons = Vec::new();
    if ok == 0 {
        reasons.push(
            "no request succeeded in the measured window: there is nothing to measure".into(),
        );
    }
    if let Some(RateTarget { rate, tolerance }) = target {
        if achieved_rate < rate * (1.0 - tolerance) {
            reasons.push(format!(
                "the generator did not keep up: achieved {achieved_rate:.1} req/s, more than \
                 {:.0}% under the target {rate} req/s",
                tolerance * 100.0
            ));
        }
        if lag_p99_us > 1_000 {
            reasons.push(format!(
                "schedule lag p99 is {lag_p99_us} us, over 1 ms: the generator's own timing \
                 error is too large for these figures"
            ));
        }
        if lag_p50_us > LAG_P50_LIMIT_US {
            reasons.push(format!(
                "schedule lag p50 is {lag_p50_us} us, over {LAG_P50_LIMIT_US} us: most requests \
                 left late, so the pacing itself was off, not a passing burst, and every figure \
                 carries it"
            ));
        }
        if send_p99_us > 1_000 || send_p50_us > LAG_P50_LIMIT_US {
            reasons.push(format!(
                "send delay p50 {send_p50_us} us, p99 {send_p99_us} us (limits \
                 {LAG_P50_LIMIT_US} us and 1 ms): requests waited on the generator after \
                 dispatch, as for a connection it had not yet noticed was free; that wait is \
                 the generator's error, not the target's"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lag(values_us: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &(value, count) in values_us {
            h.record_n(value, count).unwrap();
        }
        h
    }

    #[test]
    fn a_pacer_on_time_with_a_tail_is_valid() {
        let on_time = lag(&[(1, 980), (500, 20)]);
        let reasons = generator_reasons(
            1000,
            5000.0,
            Some(RateTarget::of(5000.0, false, 1.0)),
            timing(&on_time),
        );
        assert!(reasons.is_empty(), "{reasons:?}");
    }

    #[test]
    fn a_poisson_schedules_own_shortfall_is_not_the_generators() {
        let on_time = lag(&[(1, 1000)]);
        // 20 a second for 10 s: 200 sends expected, 190 drawn (−0.7 of a standard deviation).
        let poisson = RateTarget::of(20.0, true, 10.0);
        assert!(generator_reasons(190, 19.0, Some(poisson), timing(&on_time)).is_empty());
        // Evenly spaced, 10 missing are 10 the generator did not send.
        let constant = RateTarget::of(20.0, false, 10.0);
        let reasons = generator_reasons(190, 19.0, Some(constant), timing(&on_time));
        assert!(
            reasons.iter().any(|r| r.contains("did not keep up")),
            "{reasons:?}"
        );
        // At 5,000 a second for 10 s, a Poisson count 3% short is beyond chance.
        let large = RateTarget::of(5000.0, true, 10.0);
        let reasons = generator_reasons(48_500, 4850.0, Some(large), timing(&on_time));
        assert!(
            reasons.iter().any(|r| r.contains("more than 2% under")),
            "{reasons:?}"
        );
    }

    #[test]
    fn a_late_median_or_a_long_tail_is_the_generators_error() {
        // Most requests late by 71 µs, the tail under 1 ms: the drift of two clocks.
        let drifting = lag(&[(71, 900), (300, 100)]);
        let reasons = generator_reasons(
            1000,
            5000.0,
            Some(RateTarget::of(5000.0, false, 1.0)),
            timing(&drifting),
        );
        assert!(
            reasons.iter().any(|r| r.contains("lag p50 is 71 us")),
            "{reasons:?}"
        );
        let tail = lag(&[(1, 980), (2_000, 20)]);
        let reasons = generator_reasons(
            1000,
            5000.0,
            Some(RateTarget::of(5000.0, false, 1.0)),
            timing(&tail),
        );
        assert!(reasons.iter().any(|r| r.contains("p99")), "{reasons:?}");
        // A closed loop has no schedule to lag behind.
        assert!(generator_reasons(1000, 5000.0, None, timing(&drifting)).is_empty());
    }

    #[test]
    fn a_late_send_after_dispatch_is_the_generators_error() {
        let on_time = lag(&[(1, 1000)]);
        let judged = |send_delay: &Histogram<u64>| {
            let timing = GeneratorTiming {
                lag: Some(&on_time),
                send_delay: Some(send_delay),
            };
            generator_reasons(
                1000,
                5000.0,
                Some(RateTarget::of(5000.0, false, 1.0)),
                timing,
            )
        };
        // Dispatched on time, then sent ~156 µs later with idle connections at hand.
        let reasons = judged(&lag(&[(156, 900), (400, 100)]));
        assert!(
            reasons.iter().any(|r| r.contains("send delay p50 156 us")),
            "{reasons:?}"
        );
        let reasons = judged(&lag(&[(2, 990), (300, 10)]));
        assert!(reasons.is_empty(), "{reasons:?}");
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

    fn timing(lag: &Histogram<u64>) -> GeneratorTiming<'_> {
        GeneratorTiming {
            lag: Some(lag),
            send_delay: None,
        }
    }
}
