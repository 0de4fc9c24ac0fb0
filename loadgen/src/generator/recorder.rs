//! What each worker records: a histogram per metric, failures by kind, and a per-second
//! timeline, merged into one record at the end of a run. Memory is bounded by the histograms,
//! never by the number of requests.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use hdrhistogram::Histogram;

use crate::generator::breakdown::Breakdown;
use crate::generator::intervals::PerSecond;
use crate::generator::live::Live;
use crate::generator::sessions::tally::SessionTally;
use crate::results::series::Series;
use crate::wire::outcome::{ErrorKind, Exchange, Tag};

use crate::results::metric::Metric;

use crate::generator::histogram::{new_histogram, MAX_US};
use crate::results::breakdown::SecondSummary;

/// What one worker recorded.
#[derive(Debug)]
pub struct Recorder {
    histograms: Vec<Histogram<u64>>,
    pub ok: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    /// Requests sent during warm-up (not recorded).
    pub warmup: u64,
    /// Requests dispatched whose intended start fell in the measured window.
    pub dispatched: u64,
    /// Dispatch time of the last of them, ns from the start of the run.
    pub last_dispatch_ns: u64,
    /// When the first and the last request of the measured window ended (answered or failed),
    /// ns from the start of the run: the span the throughput is over (`u64::MAX` and 0 before
    /// any).
    pub first_done_ns: u64,
    pub last_done_ns: u64,
    /// Start of the measured window, ns from the start of the run.
    window_start_ns: u64,
    seconds: PerSecond,
    /// By class and by stage, when the plan has either.
    pub breakdown: Breakdown,
    /// By turn and by session, when the plan sends sessions.
    pub sessions: Option<Box<SessionTally>>,
    /// The live counters a metrics endpoint serves (`--metrics-listen`), updated as this
    /// record is.
    live: Option<Arc<Live>>,
}

impl Recorder {
    /// A recorder whose measured window starts `window_start_ns` after the start of the run.
    pub fn new(window_start_ns: u64) -> Recorder {
        Recorder::logging(window_start_ns, &[])
    }

    /// A recorder that also keeps the metrics of `logged` per second (for interval logs).
    pub fn logging(window_start_ns: u64, logged: &[Metric]) -> Recorder {
        Recorder {
            histograms: Metric::ALL.iter().map(|_| new_histogram(3)).collect(),
            ok: 0,
            errors: BTreeMap::new(),
            warmup: 0,
            dispatched: 0,
            last_dispatch_ns: 0,
            first_done_ns: u64::MAX,
            last_done_ns: 0,
            window_start_ns,
            seconds: PerSecond::new(window_start_ns, logged),
            breakdown: Breakdown::default(),
            sessions: None,
            live: None,
        }
    }

    /// This recorder, also counting into `live` when there is one.
    pub fn live(self, live: Option<Arc<Live>>) -> Recorder {
        Recorder { live, ..self }
    }

    /// This recorder, also recording sessions by turn.
    pub fn with_sessions(self) -> Recorder {
        let tally = SessionTally {
            window_start_ns: self.window_start_ns,
            ..SessionTally::default()
        };
        Recorder {
            sessions: Some(Box::new(tally)),
            ..self
        }
    }

    /// This recorder, also breaking its requests down as `breakdown` does.
    pub fn grouped(self, breakdown: Breakdown) -> Recorder {
        Recorder { breakdown, ..self }
    }

    fn record(&mut self, metric: Metric, value: u64) {
        let value = value.clamp(1, MAX_US);
        self.histograms[metric as usize].saturating_record(value);
        self.seconds.record(metric, value);
    }

    /// Records a count (not clamped to 1: a stream may have no output event).
    fn count(&mut self, metric: Metric, value: u64) {
        self.histograms[metric as usize].saturating_record(value);
        self.seconds.record(metric, value);
    }

    /// The histogram of a metric.
    pub fn histogram(&self, metric: Metric) -> &Histogram<u64> {
        &self.histograms[metric as usize]
    }

    /// True when `due_ns` falls in the warm-up.
    pub fn in_warmup(&self, due_ns: u64) -> bool {
        due_ns < self.window_start_ns
    }

    /// Counts a dispatch (for the achieved rate).
    pub fn dispatch(&mut self, due_ns: u64, dispatched_ns: u64) {
        if !self.in_warmup(due_ns) {
            self.dispatched += 1;
            self.last_dispatch_ns = self.last_dispatch_ns.max(dispatched_ns);
            if let Some(live) = &self.live {
                live.sent.fetch_add(1, Relaxed);
            }
        }
    }

    /// Records a successful exchange.
    pub fn success(&mut self, x: &Exchange) {
        if self.in_warmup(x.due_ns) {
            self.warmup += 1;
            return;
        }
        self.ok += 1;
        self.ended(x.done_ns);
        self.seconds.roll_to(x.done_ns);
        let us = |ns: u64| ns / 1_000;
        let response_us = us(x.done_ns.saturating_sub(x.due_ns));
        self.record(Metric::ResponseTime, response_us);
        self.record(Metric::ServiceTime, us(x.done_ns.saturating_sub(x.sent_ns)));
        // What of a session request's building came after it was due (a tool round's, or a
        // turn's with no think time) is its own figure, and not the schedule's lag; a late
        // start before the building still is.
        let built_late_ns = x.build.map_or(0, |b| b.after_due(x.due_ns));
        let lag_ns = x.dispatched_ns.saturating_sub(x.due_ns);
        let lag_us = us(lag_ns.saturating_sub(built_late_ns));
        self.record(Metric::ScheduleLag, lag_us);
        if x.build.is_some() {
            self.record(Metric::BuildTime, us(built_late_ns));
        }
        let wait_ns = x.sent_ns.saturating_sub(x.dispatched_ns);
        self.record(Metric::ConnectionWait, us(wait_ns));
        self.record(
            Metric::SendDelay,
            us(wait_ns.saturating_sub(x.target_wait_ns)),
        );
        if let Some(first) = x.first_byte_ns {
            self.record(Metric::Ttfb, us(first.saturating_sub(x.due_ns)));
            self.record(Metric::TtfbService, us(first.saturating_sub(x.sent_ns)));
        }
        let mut ttft_us = None;
        if x.stream {
            if let Some(first) = x.first_output_ns {
                let ttft = us(first.saturating_sub(x.due_ns));
                ttft_us = Some(ttft);
                self.record(Metric::Ttft, ttft);
                self.record(Metric::TtftService, us(first.saturating_sub(x.sent_ns)));
                let tokens = x.usage_tokens.unwrap_or(x.output_events);
                if tokens > 1 {
                    let decode_ns = x.done_ns.saturating_sub(first);
                    self.record(Metric::Tpot, us(decode_ns / (tokens - 1)));
                }
            }
            for gap in &x.output_gaps_ns {
                self.record(Metric::Itl, us(*gap));
            }
            self.count(Metric::OutputChunks, x.output_events);
            let tokens = x.usage_tokens.unwrap_or(x.output_events);
            self.count(Metric::OutputTokens, tokens);
        }
        if let Some(live) = &self.live {
            live.success(response_us, lag_us, ttft_us);
        }
        self.breakdown.success(x, response_us.clamp(1, MAX_US));
        if let Some(sessions) = self.sessions.as_mut().filter(|_| x.tag.turn > 0) {
            sessions.success(x, response_us.clamp(1, MAX_US));
        }
        self.seconds.outcome(Some(response_us.clamp(1, MAX_US)));
    }

    /// Records a failure of a request (`tag`) that was due at `due_ns` and ended at `done_ns`.
    pub fn failure(&mut self, kind: ErrorKind, due_ns: u64, done_ns: u64, tag: Tag) {
        if self.in_warmup(due_ns) {
            self.warmup += 1;
            return;
        }
        *self.errors.entry(kind).or_default() += 1;
        if let Some(live) = &self.live {
            live.failure(kind);
        }
        self.breakdown.failure(tag, due_ns);
        if let Some(sessions) = self.sessions.as_mut().filter(|_| tag.turn > 0) {
            sessions.failure(tag);
        }
        self.ended(done_ns);
        self.seconds.roll_to(done_ns);
        self.seconds.outcome(None);
    }

    fn ended(&mut self, done_ns: u64) {
        self.first_done_ns = self.first_done_ns.min(done_ns);
        self.last_done_ns = self.last_done_ns.max(done_ns);
    }

    /// Failed requests, all kinds.
    pub fn failed(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Adds another worker's record into this one.
    pub fn merge(&mut self, mut other: Recorder) {
        for (mine, theirs) in self.histograms.iter_mut().zip(&other.histograms) {
            // Invariant: both were made by `histogram(3)` with the same bounds.
            mine.add(theirs).expect("same bounds");
        }
        self.ok += other.ok;
        self.warmup += other.warmup;
        self.dispatched += other.dispatched;
        self.last_dispatch_ns = self.last_dispatch_ns.max(other.last_dispatch_ns);
        self.first_done_ns = self.first_done_ns.min(other.first_done_ns);
        self.last_done_ns = self.last_done_ns.max(other.last_done_ns);
        for (kind, n) in std::mem::take(&mut other.errors) {
            *self.errors.entry(kind).or_default() += n;
        }
        self.breakdown.merge(&other.breakdown);
        match (&mut self.sessions, other.sessions.take()) {
            (Some(mine), Some(theirs)) => mine.merge(&theirs),
            (mine @ None, theirs) => *mine = theirs,
            _ => {}
        }
        self.seconds.finish();
        other.seconds.finish();
        self.seconds.merge(&other.seconds);
    }

    /// The per-second timeline.
    pub fn timeline_summary(&mut self) -> Vec<SecondSummary> {
        self.seconds.finish();
        (0..self.seconds.len())
            .filter_map(|i| self.seconds.second(i).map(|s| (i, s)))
            .map(|(i, (errors, h))| SecondSummary::of(i as u64, errors, &h))
            .collect()
    }

    /// The logged metrics' per-second histograms, when this recorder logged them.
    pub fn take_logged(&mut self) -> Option<Vec<(Metric, Series)>> {
        self.seconds.finish();
        self.seconds.take_logged()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(due_ms: u64, latency_ms: u64) -> Exchange {
        Exchange {
            due_ns: due_ms * 1_000_000,
            dispatched_ns: due_ms * 1_000_000 + 5_000,
            sent_ns: due_ms * 1_000_000 + 10_000,
            done_ns: (due_ms + latency_ms) * 1_000_000,
            first_byte_ns: Some((due_ms + 1) * 1_000_000),
            ..Exchange::default()
        }
    }

    /// A simulated target: 300 requests due every 10 ms from 0, each answered 1 ms after it is
    /// sent, but none before 2,001 ms while the target stalls from 1 s to 2 s. With one
    /// connection, a request is sent when it is due or when the one before it ended.
    fn stalled(connections: usize) -> Recorder {
        let mut r = Recorder::new(0);
        let mut free_at = vec![0u64; connections];
        for i in 0..300u64 {
            let due = i * 10_000_000;
            let slot = (i as usize) % connections;
            let sent = due.max(free_at[slot]);
            let stall_ends = if (1_000_000_000..2_000_000_000).contains(&sent) {
                2_000_000_000
            } else {
                sent
            };
            let done = stall_ends + 1_000_000;
            free_at[slot] = done;
            r.dispatch(due, due);
            r.success(&Exchange {
                due_ns: due,
                dispatched_ns: due,
                sent_ns: sent,
                done_ns: done,
                ..Exchange::default()
            });
        }
        r
    }

    #[test]
    fn a_stalled_targets_latencies_count_from_the_intended_sends() {
        let at = |r: &Recorder, metric, q| r.histogram(metric).value_at_quantile(q);
        let same = |r: &Recorder, metric, q, want_us| {
            let got = at(r, metric, q);
            assert!(
                r.histogram(metric).equivalent(got, want_us),
                "{metric:?} at {q}: {got} us, theory {want_us} us"
            );
        };
        // Open loop: 200 requests answered in 1 ms; the 100 due in the stall, at 1,000 +
        // 10k ms, answered at 2,001 ms: 11, 21, ... 1,001 ms. Rank 200 + k is 1 + 10k ms.
        let open = stalled(300);
        same(&open, Metric::ResponseTime, 0.5, 1_000);
        same(&open, Metric::ResponseTime, 0.90, 701_000);
        same(&open, Metric::ResponseTime, 0.95, 851_000);
        same(&open, Metric::ResponseTime, 0.99, 971_000);
        // One connection, as a closed loop holds: the stalled request holds it, the rest queue
        // behind it and are sent late; their service times (1 ms each) hide the stall, which
        // counting from the intended sends shows whole.
        let closed = stalled(1);
        same(&closed, Metric::ServiceTime, 0.99, 1_000);
        assert!(at(&closed, Metric::ResponseTime, 0.90) >= 701_000);
        same(&closed, Metric::ResponseTime, 1.0, 1_001_000);
        assert_eq!(closed.ok, 300);
    }

    #[test]
    fn building_after_the_due_time_is_build_time_and_a_late_start_is_still_lag() {
        use crate::wire::outcome::Build;
        let mut r = Recorder::new(0);
        let mut sent = |due_ns: u64, (from_ns, ready_ns): (u64, u64), dispatched_ns: u64| {
            r.success(&Exchange {
                due_ns,
                dispatched_ns,
                sent_ns: dispatched_ns,
                done_ns: due_ns + 2_000_000,
                build: Some(Build { from_ns, ready_ns }),
                ..Exchange::default()
            });
        };
        // A tool round due at its answer's end (10 ms), built in 30 µs, sent 2 µs later.
        sent(10_000_000, (10_000_000, 10_030_000), 10_032_000);
        // A turn built during its think time, sent 5 µs after it was due: nothing built late.
        sent(20_000_000, (12_000_000, 12_004_000), 20_005_000);
        // A session's first turn whose task began 300 µs late, then built in 40 µs.
        sent(30_000_000, (30_300_000, 30_340_000), 30_341_000);
        let lag = r.histogram(Metric::ScheduleLag);
        let values: Vec<u64> = lag.iter_recorded().map(|v| v.value_iterated_to()).collect();
        assert_eq!(values, [2, 5, 301]);
        let build = r.histogram(Metric::BuildTime);
        let values: Vec<u64> = build
            .iter_recorded()
            .map(|v| v.value_iterated_to())
            .collect();
        assert_eq!(values, [1, 30, 40]);
        // Latencies still count from the due time.
        let response = r.histogram(Metric::ResponseTime);
        assert!(response.equivalent(response.max(), 2_000));
    }

    #[test]
    fn warmup_is_counted_apart_and_metrics_are_from_the_schedule() {
        let mut r = Recorder::new(1_000_000_000);
        r.success(&exchange(500, 10));
        r.success(&exchange(1500, 10));
        r.failure(
            ErrorKind::Status(503),
            1_600_000_000,
            1_700_000_000,
            Tag::default(),
        );
        assert_eq!((r.warmup, r.ok, r.failed()), (1, 1, 1));
        assert!(r
            .histogram(Metric::ResponseTime)
            .equivalent(r.histogram(Metric::ResponseTime).max(), 10_000));
        assert_eq!(r.histogram(Metric::ScheduleLag).max(), 5);
        assert_eq!(r.histogram(Metric::ServiceTime).len(), 1);
    }

    #[test]
    fn stream_metrics_follow_the_definitions() {
        let mut r = Recorder::new(0);
        let x = Exchange {
            due_ns: 0,
            dispatched_ns: 0,
            sent_ns: 1_000_000,
            // 0.7 ms of the 1 ms wait for a connection was the target's.
            target_wait_ns: 700_000,
            first_byte_ns: Some(2_000_000),
            first_output_ns: Some(101_000_000),
            done_ns: 191_000_000,
            output_gaps_ns: vec![10_000_000; 9],
            output_events: 10,
            usage_tokens: None,
            stream: true,
            mock_times: None,
            tag: Tag::default(),
            ..Exchange::default()
        };
        r.success(&x);
        let v = |m| r.histogram(m).max();
        // Three significant digits: within 0.1%.
        assert!((100_900..=101_100).contains(&v(Metric::Ttft)));
        assert!((99_900..=100_100).contains(&v(Metric::TtftService)));
        // (191 − 101) ms / (10 − 1) = 10 ms.
        assert!((9_990..=10_010).contains(&v(Metric::Tpot)));
        assert_eq!(r.histogram(Metric::Itl).len(), 9);
        assert_eq!(v(Metric::OutputChunks), 10);
        assert!((999..=1_001).contains(&v(Metric::ConnectionWait)));
        assert!((299..=301).contains(&v(Metric::SendDelay)));
    }

    #[test]
    fn merged_workers_equal_one_recorder_of_everything() {
        let mut one = Recorder::new(0);
        let (mut a, mut b) = (Recorder::new(0), Recorder::new(0));
        for i in 0..3000u64 {
            let x = exchange(i, 1 + i % 37);
            one.success(&x);
            if i % 2 == 0 {
                a.success(&x)
            } else {
                b.success(&x)
            }
        }
        one.failure(ErrorKind::Reset, 10, 2_500_000_000, Tag::default());
        b.failure(ErrorKind::Reset, 10, 2_500_000_000, Tag::default());
        a.merge(b);
        assert_eq!(a.ok, one.ok);
        assert_eq!(a.errors, one.errors);
        for m in Metric::ALL {
            assert_eq!(a.histogram(m), one.histogram(m), "{}", m.name());
        }
        let (ta, to) = (a.timeline_summary(), one.timeline_summary());
        assert_eq!(ta.len(), to.len());
        for (x, y) in ta.iter().zip(&to) {
            assert_eq!(
                (x.ok, x.errors, x.response_time_p99_us),
                (y.ok, y.errors, y.response_time_p99_us)
            );
        }
    }

    #[test]
    fn logged_seconds_add_up_to_the_run_even_across_workers() {
        let (mut a, mut b) = (
            Recorder::logging(0, &Metric::ALL),
            Recorder::logging(0, &Metric::ALL),
        );
        for i in 0..3000u64 {
            // Three seconds of completions (1 ms apart, each 1..37 ms long).
            let x = exchange(i, 1 + i % 37);
            if i % 2 == 0 {
                a.success(&x)
            } else {
                b.success(&x)
            }
        }
        a.merge(b);
        let logged = a.take_logged().unwrap();
        assert_eq!(logged.len(), Metric::ALL.len());
        assert_eq!(logged[Metric::ResponseTime as usize].1.len(), 4);
        for (m, series) in &logged {
            let m = *m;
            let mut sum = new_histogram(3);
            for i in 0..series.len() {
                sum.add(series.get(i).unwrap()).unwrap();
            }
            assert_eq!(&sum, a.histogram(m), "{}", m.name());
        }
        assert!(Recorder::new(0).take_logged().is_none());
        let mut some = Recorder::logging(0, &[Metric::Ttfb, Metric::ResponseTime]);
        some.success(&exchange(1, 1));
        let logged: Vec<Metric> = some
            .take_logged()
            .unwrap()
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        assert_eq!(logged, [Metric::ResponseTime, Metric::Ttfb]);
    }
}
