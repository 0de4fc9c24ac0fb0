//! Per-second histograms: the timeline's response times (always) and, for HdrHistogram interval
//! logs (`--hdr-log`), every metric's. Each closed second is V2-encoded into one growing buffer
//! per metric (a few hundred bytes a second; not deflated, as the compressor allocates hundreds
//! of kilobytes each time). One buffer and one reused serialiser, rather than a small buffer kept
//! per second, leave no long-lived fragments in the heap to make it grow.

use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;

use crate::generator::histogram::new_histogram;
use crate::results::metric::Metric;

use crate::results::series::Series;

/// The metrics kept per second for interval logs: the reported ones, with `--hdr-log`.
pub fn logged(plan: &crate::generator::plan::Plan) -> Vec<Metric> {
    match plan.hdr_log {
        Some(_) => {
            crate::results::metric::reported_by(plan.request.stream, plan.sessions.is_some())
                .collect()
        }
        None => Vec::new(),
    }
}

impl Series {
    fn push(&mut self, histogram: &Histogram<u64>, serializer: &mut V2Serializer) {
        // Invariant: serialising into a Vec cannot fail for a valid histogram.
        serializer
            .serialize(histogram, &mut self.bytes)
            .expect("histogram serialises");
        self.ends.push(self.bytes.len());
    }

    /// `self` and `other` added second by second (one decoded histogram at a time).
    fn merged(&self, other: &Series, sigfig: u8, serializer: &mut V2Serializer) -> Series {
        let mut merged = Series::default();
        for i in 0..self.len().max(other.len()) {
            let mut histogram = self.get(i).unwrap_or_else(|| new_histogram(sigfig));
            if let Some(h) = other.get(i) {
                // Invariant: every second of a series is made by `new_histogram(sigfig)`.
                histogram.add(h).expect("same bounds");
            }
            merged.push(&histogram, serializer);
        }
        merged
    }
}

/// Precision of the timeline's response times (a second's p50 and p99 for the report).
const TIMELINE_SIGFIG: u8 = 2;
/// Precision of the logged metrics: that of the run's histograms, so a log's intervals add up to
/// exactly the run's histogram.
const LOG_SIGFIG: u8 = 3;

/// A logged metric: its second in progress and its closed seconds.
type Logged = (Histogram<u64>, Series);

/// The second in progress and the closed ones, by completion time from the start of the
/// measured window.
#[derive(Debug)]
pub struct PerSecond {
    window_start_ns: u64,
    current_second: u64,
    current_errors: u64,
    errors: Vec<u64>,
    timeline_current: Histogram<u64>,
    timeline: Series,
    /// Each logged metric's second in progress and closed seconds, by `Metric` (`None` for a
    /// metric not logged: all of them without interval logs).
    logged: Vec<Option<Logged>>,
    serializer: Serializing,
}

/// A V2 serialiser (it keeps a buffer between uses), with a Debug that does not print it.
struct Serializing(V2Serializer);

impl std::fmt::Debug for Serializing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("V2Serializer")
    }
}

impl PerSecond {
    /// Seconds counted from `window_start_ns`; the metrics of `logged` are kept per second too.
    pub fn new(window_start_ns: u64, logged: &[Metric]) -> PerSecond {
        PerSecond {
            window_start_ns,
            current_second: 0,
            current_errors: 0,
            errors: Vec::new(),
            timeline_current: new_histogram(TIMELINE_SIGFIG),
            timeline: Series::default(),
            logged: Metric::ALL
                .iter()
                .map(|m| {
                    logged
                        .contains(m)
                        .then(|| (new_histogram(LOG_SIGFIG), Series::default()))
                })
                .collect(),
            serializer: Serializing(V2Serializer::new()),
        }
    }

    /// Closes the seconds before the one holding `done_ns`; what is recorded next goes there.
    pub fn roll_to(&mut self, done_ns: u64) {
        let second = done_ns.saturating_sub(self.window_start_ns) / 1_000_000_000;
        while second > self.current_second {
            self.close_second();
        }
    }

    /// Records a value of `metric` in the second in progress (when metrics are logged).
    #[inline]
    pub fn record(&mut self, metric: Metric, value: u64) {
        if let Some(Some((current, _))) = self.logged.get_mut(metric as usize) {
            current.saturating_record(value);
        }
    }

    /// Records a success's response time, or a failure, in the timeline's second in progress.
    pub fn outcome(&mut self, response_us: Option<u64>) {
        match response_us {
            Some(us) => self.timeline_current.saturating_record(us),
            None => self.current_errors += 1,
        }
    }

    fn close_second(&mut self) {
        let serializer = &mut self.serializer.0;
        self.timeline.push(&self.timeline_current, serializer);
        self.timeline_current.reset();
        self.errors.push(self.current_errors);
        self.current_errors = 0;
        for (current, series) in self.logged.iter_mut().flatten() {
            series.push(current, serializer);
            current.reset();
        }
        self.current_second += 1;
    }

    /// Closes the second in progress, if it holds anything.
    pub fn finish(&mut self) {
        let logged_any = self
            .logged
            .iter()
            .flatten()
            .any(|(current, _)| !current.is_empty());
        if !self.timeline_current.is_empty() || self.current_errors > 0 || logged_any {
            self.close_second();
        }
    }

    /// Adds another worker's seconds into these (both finished).
    pub fn merge(&mut self, other: &PerSecond) {
        let serializer = &mut self.serializer.0;
        self.timeline = self
            .timeline
            .merged(&other.timeline, TIMELINE_SIGFIG, serializer);
        let seconds = self.errors.len().max(other.errors.len());
        self.errors.resize(seconds, 0);
        for (mine, theirs) in self.errors.iter_mut().zip(&other.errors) {
            *mine += theirs;
        }
        for (a, b) in self.logged.iter_mut().zip(&other.logged) {
            if let (Some((_, a)), Some((_, b))) = (a, b) {
                *a = a.merged(b, LOG_SIGFIG, serializer);
            }
        }
        self.current_second = self.current_second.max(other.current_second);
    }

    /// Closed seconds.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// True when no second is closed.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Second `i`: its failures and its response-time histogram (2 significant digits).
    pub fn second(&self, i: usize) -> Option<(u64, Histogram<u64>)> {
        Some((*self.errors.get(i)?, self.timeline.get(i)?))
    }

    /// The logged metrics and their seconds, when metrics were logged.
    pub fn take_logged(&mut self) -> Option<Vec<(Metric, Series)>> {
        let logged: Vec<(Metric, Series)> = Metric::ALL
            .into_iter()
            .zip(std::mem::take(&mut self.logged))
            .filter_map(|(m, l)| l.map(|(_, series)| (m, series)))
            .collect();
        (!logged.is_empty()).then_some(logged)
    }
}
