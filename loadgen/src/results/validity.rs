//! Whether a run's figures can be trusted: the rules every run and every merge of shards is
//! judged by (the generator kept up, on time), and the verdict a result carries.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Schedule lag p50 above which a run is invalid: a pacer on time sends most requests within a
/// microsecond or two, so a median this late means the pacing itself was off (deadlines armed
/// on one clock and read on another crept to 71 µs over 150 s while the p99 stayed under 1 ms).
/// The same limit holds for the send delay.
pub const LAG_P50_LIMIT_US: u64 = 50;

/// `build_time` p50 above which a session run is invalid: building a body from pieces written
/// once takes a few microseconds (a median of 0.5-9 µs a turn and 2-11 µs a tool round for
/// 1k-32k tokens of history), and reading a streamed chat answer back about 0.4 µs a chunk, on
/// a 2-vCPU EPYC guest (`benches/session_body.rs`), so a median this long means the client's own
/// work holds its requests back.
pub const BUILD_P50_LIMIT_US: u64 = 50;

/// `build_time` p99 above which a session run is invalid (as for the schedule lag).
pub const BUILD_P99_LIMIT_US: u64 = 1_000;

/// The generator's own timing: when it dispatched each request against its schedule
/// (`schedule_lag`), how long it then took to send it beyond what the target caused
/// (`send_delay`), and how long a session's request took to build (`build_time`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneratorTiming<'a> {
    pub lag: Option<&'a Histogram<u64>>,
    pub send_delay: Option<&'a Histogram<u64>>,
    pub build: Option<&'a Histogram<u64>>,
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
/// [`LAG_P50_LIMIT_US`] (open loop); a session's requests took over [`BUILD_P50_LIMIT_US`]
/// (p50) or [`BUILD_P99_LIMIT_US`] (p99) to build.
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
    let (build_p50_us, build_p99_us) = quantiles(timing.build.filter(|h| !h.is_empty()));
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
                 dispatch, as for a connection it had not yet noticed was free: that wait is \
                 the generator's error, not the target's"
            ));
        }
    }
    if build_p50_us > BUILD_P50_LIMIT_US || build_p99_us > BUILD_P99_LIMIT_US {
        reasons.push(format!(
            "build time p50 {build_p50_us} us, p99 {build_p99_us} us (limits \
             {BUILD_P50_LIMIT_US} us and 1 ms): the client's own work on a turn's history and \
             body held its requests back, and the latencies of turns due at once carry it"
        ));
    }
    reasons
}

/// Whether the generator kept up, and if not, why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Validity {
    pub valid: bool,
    #[serde(default)]
    pub reasons: Vec<String>,
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
                build: None,
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

    fn timing(lag: &Histogram<u64>) -> GeneratorTiming<'_> {
        GeneratorTiming {
            lag: Some(lag),
            send_delay: None,
            build: None,
        }
    }

    #[test]
    fn a_slow_client_is_caught_by_its_build_time_and_an_empty_one_is_not_judged() {
        let on_time = lag(&[(1, 1000)]);
        let judge = |build: &Histogram<u64>| {
            let timing = GeneratorTiming {
                build: Some(build),
                ..timing(&on_time)
            };
            generator_reasons(1000, 5.0, Some(RateTarget::of(5.0, false, 200.0)), timing)
        };
        assert!(judge(&lag(&[])).is_empty());
        assert!(judge(&lag(&[(3, 990), (900, 10)])).is_empty());
        let slow = judge(&lag(&[(60, 1000)]));
        assert_eq!(slow.len(), 1, "{slow:?}");
        assert!(slow[0].starts_with("build time p50 60 us"), "{slow:?}");
        let tail = judge(&lag(&[(3, 980), (2_000, 20)]));
        assert!(tail[0].contains("p99 2000 us"), "{tail:?}");
    }
}
