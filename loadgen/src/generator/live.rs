//! Live counters for a Prometheus scrape during a run (`--metrics-listen`): what the workers
//! recorded so far, as counters and cumulative histograms that Prometheus can add across
//! shards. Only the measured window is counted, so the sums over every shard's last scrape
//! are the merged result's counts. Updated with relaxed atomics; when the flag is off the
//! workers hold no `Live` and pay one branch a request.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use crate::wire::outcome::ErrorKind;

/// Upper bounds of the histograms' buckets, in µs: 1, 2, 5, 10, 25, 50, 100 … 10 s, then 30 s
/// and 60 s, so one set serves a schedule lag of microseconds and a stream of a minute.
pub const BOUNDS_US: [u64; 24] = [
    1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000,
    250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 30_000_000, 60_000_000,
];

/// A histogram of µs values in [`BOUNDS_US`] buckets (the last counts what lies past 60 s).
#[derive(Debug, Default)]
pub struct LiveHistogram {
    buckets: [AtomicU64; BOUNDS_US.len() + 1],
    sum_us: AtomicU64,
}

impl LiveHistogram {
    /// Counts one value.
    pub fn record(&self, us: u64) {
        let bucket = BOUNDS_US.partition_point(|&bound| bound < us);
        self.buckets[bucket].fetch_add(1, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
    }

    /// The cumulative counts at each bound and past the last, and the sum in µs.
    pub fn read(&self) -> ([u64; BOUNDS_US.len() + 1], u64) {
        let mut cumulative = [0; BOUNDS_US.len() + 1];
        let mut total = 0;
        for (out, bucket) in cumulative.iter_mut().zip(&self.buckets) {
            total += bucket.load(Relaxed);
            *out = total;
        }
        (cumulative, self.sum_us.load(Relaxed))
    }
}

/// Error kinds other than a status, then one slot per status code below 1000.
const STATUS_BASE: usize = 10;
const ERROR_SLOTS: usize = STATUS_BASE + 1000;

/// What one target's run recorded so far, with the labels it is served under.
#[derive(Debug)]
pub struct Live {
    /// `target`, `scenario` and `shard`, as Prometheus label pairs.
    labels: String,
    /// Requests sent in the measured window.
    pub sent: AtomicU64,
    pub ok: AtomicU64,
    errors: Box<[AtomicU64]>,
    pub response_time: LiveHistogram,
    pub schedule_lag: LiveHistogram,
    pub ttft: LiveHistogram,
}

impl Live {
    /// Counters for a run of `scenario` against `target` as shard `shard` (like `2/4`).
    pub fn new(target: &str, scenario: &str, shard: &str) -> Live {
        Live {
            labels: format!(
                "target=\"{}\",scenario=\"{}\",shard=\"{}\"",
                escape(target),
                escape(scenario),
                escape(shard)
            ),
            sent: AtomicU64::new(0),
            ok: AtomicU64::new(0),
            errors: (0..ERROR_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            response_time: LiveHistogram::default(),
            schedule_lag: LiveHistogram::default(),
            ttft: LiveHistogram::default(),
        }
    }

    /// Counts an answered exchange by the times its recorder measured, in µs from its intended
    /// send time: to the end of its answer, to its send, and to a stream's first token.
    pub fn success(&self, response_us: u64, lag_us: u64, ttft_us: Option<u64>) {
        self.ok.fetch_add(1, Relaxed);
        self.response_time.record(response_us);
        self.schedule_lag.record(lag_us);
        if let Some(ttft_us) = ttft_us {
            self.ttft.record(ttft_us);
        }
    }

    /// Counts a failed request.
    pub fn failure(&self, kind: ErrorKind) {
        self.errors[slot(kind)].fetch_add(1, Relaxed);
    }

    /// Appends this run's series in Prometheus' text format (without the `# TYPE` lines, which
    /// [`Registry::render`] writes once per family).
    fn render(&self, family: Family, out: &mut String) {
        let labels = &self.labels;
        match family {
            Family::Sent => counter(out, "loadgen_requests_total", labels, &self.sent),
            Family::Ok => counter(out, "loadgen_ok_total", labels, &self.ok),
            Family::Errors => {
                for (index, count) in self.errors.iter().enumerate() {
                    let count = count.load(Relaxed);
                    if count > 0 {
                        let kind = kind_of(index).key();
                        let _ = writeln!(
                            out,
                            "loadgen_errors_total{{{labels},kind=\"{kind}\"}} {count}"
                        );
                    }
                }
            }
            Family::Histogram(name, pick) => histogram(out, name, labels, pick(self)),
        }
    }
}

/// The error kind counted in slot `index` (the inverse of [`slot`]).
fn kind_of(index: usize) -> ErrorKind {
    match index {
        0 => ErrorKind::ConnectRefused,
        1 => ErrorKind::ConnectTimeout,
        2 => ErrorKind::Connect,
        3 => ErrorKind::Tls,
        4 => ErrorKind::Reset,
        5 => ErrorKind::Timeout,
        6 => ErrorKind::Truncated,
        7 => ErrorKind::Invalid,
        8 => ErrorKind::Cancelled,
        9 => ErrorKind::Backlog,
        status => ErrorKind::Status((status - STATUS_BASE) as u16),
    }
}

fn slot(kind: ErrorKind) -> usize {
    match kind {
        ErrorKind::ConnectRefused => 0,
        ErrorKind::ConnectTimeout => 1,
        ErrorKind::Connect => 2,
        ErrorKind::Tls => 3,
        ErrorKind::Reset => 4,
        ErrorKind::Timeout => 5,
        ErrorKind::Truncated => 6,
        ErrorKind::Invalid => 7,
        ErrorKind::Cancelled => 8,
        ErrorKind::Backlog => 9,
        ErrorKind::Status(code) => STATUS_BASE + usize::from(code).min(999),
    }
}

/// One metric family of the page.
#[derive(Clone, Copy)]
enum Family {
    Sent,
    Ok,
    Errors,
    Histogram(&'static str, fn(&Live) -> &LiveHistogram),
}

const FAMILIES: [(Family, &str, &str); 6] = [
    (
        Family::Sent,
        "counter",
        "loadgen_requests_total requests due in the measured window and dispatched (those held back as backlog included, each also an error)",
    ),
    (
        Family::Ok,
        "counter",
        "loadgen_ok_total requests answered in full",
    ),
    (
        Family::Errors,
        "counter",
        "loadgen_errors_total failed requests by kind",
    ),
    (
        Family::Histogram("loadgen_response_time_seconds", |l| &l.response_time),
        "histogram",
        "loadgen_response_time_seconds from the intended send time to the end of the answer",
    ),
    (
        Family::Histogram("loadgen_schedule_lag_seconds", |l| &l.schedule_lag),
        "histogram",
        "loadgen_schedule_lag_seconds from the intended send time to the send",
    ),
    (
        Family::Histogram("loadgen_ttft_seconds", |l| &l.ttft),
        "histogram",
        "loadgen_ttft_seconds from the intended send time to the first token of a stream",
    ),
];

/// Every run of this process so far, served together (a finished run keeps its last counts).
#[derive(Debug, Default)]
pub struct Registry {
    runs: Mutex<Vec<Arc<Live>>>,
}

impl Registry {
    /// Adds a run's counters to the page.
    pub fn add(&self, live: Arc<Live>) {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(live);
    }

    /// New counters for a run of `scenario` against `target` as shard `shard`, on the page from
    /// now on.
    pub fn track(&self, target: &str, scenario: &str, shard: &str) -> Arc<Live> {
        let live = Arc::new(Live::new(target, scenario, shard));
        self.add(live.clone());
        live
    }

    /// The page, in Prometheus' text exposition format 0.0.4.
    pub fn render(&self) -> String {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut out = String::with_capacity(4096);
        for (family, kind, help) in FAMILIES {
            let name = help.split(' ').next().unwrap_or_default();
            let _ = writeln!(out, "# HELP {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            for run in &runs {
                run.render(family, &mut out);
            }
        }
        out
    }
}

fn counter(out: &mut String, name: &str, labels: &str, value: &AtomicU64) {
    let _ = writeln!(out, "{name}{{{labels}}} {}", value.load(Relaxed));
}

fn histogram(out: &mut String, name: &str, labels: &str, histogram: &LiveHistogram) {
    let (cumulative, sum_us) = histogram.read();
    for (bound, count) in BOUNDS_US.iter().zip(&cumulative) {
        let le = *bound as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{le}\"}} {count}");
    }
    let count = cumulative[BOUNDS_US.len()];
    let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {count}");
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", sum_us as f64 / 1e6);
    let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
}

/// A label value with `\`, `"` and newlines escaped, as the text format asks.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_fall_in_the_first_bucket_at_or_above_them() {
        let h = LiveHistogram::default();
        for us in [0, 1, 2, 3, 60_000_000, 60_000_001] {
            h.record(us);
        }
        let (cumulative, sum) = h.read();
        assert_eq!(cumulative[0], 2, "0 and 1 µs are at or below 1 µs");
        assert_eq!(cumulative[1], 3, "2 µs");
        assert_eq!(cumulative[2], 4, "3 µs is at or below 5 µs");
        assert_eq!(
            cumulative[BOUNDS_US.len() - 1],
            5,
            "60 s is in the last bound"
        );
        assert_eq!(cumulative[BOUNDS_US.len()], 6, "past 60 s only in +Inf");
        assert_eq!(sum, 120_000_007);
    }

    #[test]
    fn every_error_kind_has_a_slot_of_its_own() {
        let kinds = [
            ErrorKind::ConnectRefused,
            ErrorKind::ConnectTimeout,
            ErrorKind::Connect,
            ErrorKind::Tls,
            ErrorKind::Reset,
            ErrorKind::Timeout,
            ErrorKind::Truncated,
            ErrorKind::Invalid,
            ErrorKind::Cancelled,
            ErrorKind::Backlog,
            ErrorKind::Status(429),
            ErrorKind::Status(503),
        ];
        for kind in kinds {
            assert_eq!(kind_of(slot(kind)), kind);
        }
    }

    #[test]
    fn the_page_is_prometheus_text_with_cumulative_buckets() {
        let live = Arc::new(Live::new("http://127.0.0.1:1/v1/chat", "chat", "1/4"));
        live.sent.fetch_add(3, Relaxed);
        live.ok.fetch_add(2, Relaxed);
        live.failure(ErrorKind::Status(503));
        live.response_time.record(300);
        live.response_time.record(40_000);
        let registry = Registry::default();
        registry.add(live);
        let page = registry.render();
        let labels = r#"target="http://127.0.0.1:1/v1/chat",scenario="chat",shard="1/4""#;
        for line in [
            "# TYPE loadgen_requests_total counter".to_string(),
            format!("loadgen_requests_total{{{labels}}} 3"),
            format!("loadgen_ok_total{{{labels}}} 2"),
            format!("loadgen_errors_total{{{labels},kind=\"status_503\"}} 1"),
            "# TYPE loadgen_response_time_seconds histogram".to_string(),
            format!("loadgen_response_time_seconds_bucket{{{labels},le=\"0.00025\"}} 0"),
            format!("loadgen_response_time_seconds_bucket{{{labels},le=\"0.0005\"}} 1"),
            format!("loadgen_response_time_seconds_bucket{{{labels},le=\"0.05\"}} 2"),
            format!("loadgen_response_time_seconds_bucket{{{labels},le=\"+Inf\"}} 2"),
            format!("loadgen_response_time_seconds_sum{{{labels}}} 0.0403"),
            format!("loadgen_response_time_seconds_count{{{labels}}} 2"),
            format!("loadgen_ttft_seconds_count{{{labels}}} 0"),
        ] {
            assert!(
                page.lines().any(|l| l == line),
                "missing {line:?} in\n{page}"
            );
        }
        assert!(page.ends_with('\n'));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
