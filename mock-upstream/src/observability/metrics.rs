//! Counters the mock keeps about itself, lock-free, and their Prometheus text form.
//!
//! The emission error (actual − scheduled time of each delayed response or stream event) is the
//! mock's own error as an instrument; it is kept in a log-linear atomic histogram (relative
//! error of a bucket at most 12.5%) with exact count, sum and maximum. Beside it, the precise
//! timer's own account (`crate::timing::timer::Timers`): its margin, how late the kernel woke it, and
//! the time it spun.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use gatebench_shared::wake::WakeReport;

use crate::config::{Api, StreamFaultKind};
use crate::timing::timer::Timers;

/// What a request was, for the per-route counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    Chat,
    ChatStream,
    Messages,
    MessagesStream,
    Responses,
    ResponsesStream,
    Embeddings,
    Completions,
    CompletionsStream,
    Gemini,
    GeminiStream,
    Bedrock,
    BedrockStream,
    Models,
    Health,
    Metrics,
    Other,
}

impl RouteKind {
    const ALL: [RouteKind; 17] = [
        RouteKind::Chat,
        RouteKind::ChatStream,
        RouteKind::Messages,
        RouteKind::MessagesStream,
        RouteKind::Responses,
        RouteKind::ResponsesStream,
        RouteKind::Embeddings,
        RouteKind::Completions,
        RouteKind::CompletionsStream,
        RouteKind::Gemini,
        RouteKind::GeminiStream,
        RouteKind::Bedrock,
        RouteKind::BedrockStream,
        RouteKind::Models,
        RouteKind::Health,
        RouteKind::Metrics,
        RouteKind::Other,
    ];

    /// The counter of a request to `api`, streamed or not.
    pub fn of(api: Api, streaming: bool) -> RouteKind {
        match (api, streaming) {
            (Api::Chat, false) => RouteKind::Chat,
            (Api::Chat, true) => RouteKind::ChatStream,
            (Api::Messages, false) => RouteKind::Messages,
            (Api::Messages, true) => RouteKind::MessagesStream,
            (Api::Responses, false) => RouteKind::Responses,
            (Api::Responses, true) => RouteKind::ResponsesStream,
            (Api::Embeddings, _) => RouteKind::Embeddings,
            (Api::Completions, false) => RouteKind::Completions,
            (Api::Completions, true) => RouteKind::CompletionsStream,
            (Api::Gemini, false) => RouteKind::Gemini,
            (Api::Gemini, true) => RouteKind::GeminiStream,
            (Api::Bedrock, false) => RouteKind::Bedrock,
            (Api::Bedrock, true) => RouteKind::BedrockStream,
        }
    }

    /// True for the API routes (their requests are what a gateway forwards).
    fn is_api(self) -> bool {
        !matches!(
            self,
            RouteKind::Models | RouteKind::Health | RouteKind::Metrics | RouteKind::Other
        )
    }

    fn label(self) -> &'static str {
        match self {
            RouteKind::Chat => "chat",
            RouteKind::ChatStream => "chat_stream",
            RouteKind::Messages => "messages",
            RouteKind::MessagesStream => "messages_stream",
            RouteKind::Responses => "responses",
            RouteKind::ResponsesStream => "responses_stream",
            RouteKind::Embeddings => "embeddings",
            RouteKind::Completions => "completions",
            RouteKind::CompletionsStream => "completions_stream",
            RouteKind::Gemini => "gemini",
            RouteKind::GeminiStream => "gemini_stream",
            RouteKind::Bedrock => "bedrock",
            RouteKind::BedrockStream => "bedrock_stream",
            RouteKind::Models => "models",
            RouteKind::Health => "health",
            RouteKind::Metrics => "metrics",
            RouteKind::Other => "other",
        }
    }
}

/// Statuses always listed on `/metrics` (with 0 when none was sent); any other status from
/// 100 to 599 is listed once it has been sent (`x-mock-status: 418`).
const STATUSES: [u16; 14] = [
    200, 400, 401, 403, 404, 405, 408, 413, 429, 500, 502, 503, 504, 529,
];

/// Every status a response can carry: 100 to 599.
const ALL_STATUSES: std::ops::Range<u16> = 100..600;
const STATUS_SLOTS: usize = 500;

/// The counter slot of `status`, if it is one HTTP allows.
fn slot(status: u16) -> Option<usize> {
    ALL_STATUSES
        .contains(&status)
        .then(|| usize::from(status - ALL_STATUSES.start))
}

/// A counter per status.
#[derive(Debug)]
struct ByStatus([AtomicU64; STATUS_SLOTS]);

impl Default for ByStatus {
    fn default() -> Self {
        ByStatus(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl ByStatus {
    #[inline]
    fn add(&self, status: u16) {
        if let Some(i) = slot(status) {
            self.0[i].fetch_add(1, Relaxed);
        }
    }

    fn get(&self, status: u16) -> u64 {
        slot(status).map_or(0, |i| self.0[i].load(Relaxed))
    }

    /// The statuses to list: the usual ones, and any other that was sent.
    fn listed(&self) -> impl Iterator<Item = u16> + '_ {
        ALL_STATUSES.filter(|s| STATUSES.contains(s) || self.get(*s) > 0)
    }
}

/// All counters of one server. Shared by every worker thread.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: [AtomicU64; RouteKind::ALL.len()],
    /// API requests refused with the provider's 400 (or 401, 413, 408) before any answer was
    /// drawn, by route (they are also in `requests`).
    rejected: [AtomicU64; RouteKind::ALL.len()],
    responses: ByStatus,
    connections_opened: AtomicU64,
    connections_open: AtomicI64,
    streams_open: AtomicI64,
    accept_errors: AtomicU64,
    /// Requests answered 503 on connections past `--max-connections`.
    over_capacity: AtomicU64,
    /// Request body bytes read, and response body bytes produced.
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Faults answered on purpose (`--fault`, `x-mock-status`), by status.
    faults: ByStatus,
    stream_faults: [AtomicU64; StreamFaultKind::ALL.len()],
    /// Answers ended by the content filter on purpose.
    content_filtered: AtomicU64,
    /// Emission error of delayed responses and stream events, in microseconds.
    pub emission_error: AtomicHistogram,
    /// The workers' precise timers: their margins, wake-ups and time spun.
    timers: Timers,
}

impl Metrics {
    pub fn request(&self, route: RouteKind) {
        self.requests[route as usize].fetch_add(1, Relaxed);
    }

    /// An API request refused before any answer was drawn; counted as a request of `route` too.
    pub fn rejected(&self, route: RouteKind) {
        self.request(route);
        self.rejected[route as usize].fetch_add(1, Relaxed);
    }

    /// API requests of `route` refused before any answer was drawn.
    pub fn rejections(&self, route: RouteKind) -> u64 {
        self.rejected[route as usize].load(Relaxed)
    }

    /// A fault answered on purpose.
    pub fn fault(&self, status: u16) {
        self.faults.add(status);
    }

    /// A stream set to break on purpose (counted when it starts).
    pub fn stream_fault(&self, kind: StreamFaultKind) {
        self.stream_faults[kind as usize].fetch_add(1, Relaxed);
    }

    /// Streams set to break with `kind`.
    pub fn stream_faults(&self, kind: StreamFaultKind) -> u64 {
        self.stream_faults[kind as usize].load(Relaxed)
    }

    /// An answer set to end as the content filter ends it.
    pub fn content_filter(&self) {
        self.content_filtered.fetch_add(1, Relaxed);
    }

    /// Answers set to end as the content filter ends them.
    pub fn content_filtered(&self) -> u64 {
        self.content_filtered.load(Relaxed)
    }

    pub fn response(&self, status: u16) {
        self.responses.add(status);
    }

    /// Counts an accepted connection; returns how many are open with it.
    pub fn connection_opened(&self) -> i64 {
        self.connections_opened.fetch_add(1, Relaxed);
        self.connections_open.fetch_add(1, Relaxed) + 1
    }

    pub fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Relaxed);
    }

    pub fn stream_opened(&self) {
        self.streams_open.fetch_add(1, Relaxed);
    }

    pub fn stream_closed(&self) {
        self.streams_open.fetch_sub(1, Relaxed);
    }

    /// Body bytes read from a request.
    pub fn bytes_in(&self, n: usize) {
        self.bytes_in.fetch_add(n as u64, Relaxed);
    }

    /// Body bytes of a response (a whole one, or one stream frame).
    pub fn bytes_out(&self, n: usize) {
        self.bytes_out.fetch_add(n as u64, Relaxed);
    }

    pub fn accept_error(&self) {
        self.accept_errors.fetch_add(1, Relaxed);
    }

    pub fn over_capacity(&self) {
        self.over_capacity.fetch_add(1, Relaxed);
    }

    /// Requests seen on a route.
    pub fn requests(&self, route: RouteKind) -> u64 {
        self.requests[route as usize].load(Relaxed)
    }

    /// Responses sent with a status.
    pub fn responses(&self, status: u16) -> u64 {
        self.responses.get(status)
    }

    /// Faults answered on purpose with a status.
    pub fn faults(&self, status: u16) -> u64 {
        self.faults.get(status)
    }

    /// Streams currently open.
    pub fn streams_open(&self) -> i64 {
        self.streams_open.load(Relaxed)
    }

    /// Connections accepted since start.
    pub fn connections_opened(&self) -> u64 {
        self.connections_opened.load(Relaxed)
    }

    /// Connections currently open.
    pub fn connections_open(&self) -> i64 {
        self.connections_open.load(Relaxed)
    }

    /// The workers' timers merged: margin, wake-up lateness, late wake-ups, time spun (`None`
    /// before a worker installed its timer).
    pub fn timer(&self) -> Option<WakeReport> {
        self.timers.report()
    }

    /// Where each worker's timer registers.
    pub(crate) fn timers(&self) -> &Timers {
        &self.timers
    }

    /// The Prometheus text exposition of every counter.
    pub fn to_prometheus(&self) -> String {
        let mut out = String::with_capacity(2048);
        self.labelled(&mut out);
        self.totals(&mut out);
        self.emission(&mut out);
        self.timers.to_prometheus(&mut out);
        out
    }

    /// The counters kept per route, status or fault kind.
    fn labelled(&self, out: &mut String) {
        out.push_str("# HELP mock_requests_total Requests received, by route.\n");
        out.push_str("# TYPE mock_requests_total counter\n");
        for route in RouteKind::ALL {
            let n = self.requests(route);
            let _ = writeln!(
                out,
                "mock_requests_total{{route=\"{}\"}} {n}",
                route.label()
            );
        }
        out.push_str("# HELP mock_faults_total Errors answered on purpose (--fault, x-mock-status), by status.\n");
        out.push_str("# TYPE mock_faults_total counter\n");
        for status in ALL_STATUSES {
            let n = self.faults.get(status);
            if n > 0 || status == 429 {
                let _ = writeln!(out, "mock_faults_total{{status=\"{status}\"}} {n}");
            }
        }
        out.push_str("# HELP mock_stream_faults_total Streams set to break on purpose (--fault, x-mock-fault), by kind.\n");
        out.push_str("# TYPE mock_stream_faults_total counter\n");
        for kind in StreamFaultKind::ALL {
            let n = self.stream_faults(kind);
            let _ = writeln!(
                out,
                "mock_stream_faults_total{{kind=\"{}\"}} {n}",
                kind.name()
            );
        }
        let _ = writeln!(
            out,
            "# HELP mock_content_filtered_total Answers ended by the content filter on purpose \
             (--fault content_filter, x-mock-fault: content_filter).\n\
             # TYPE mock_content_filtered_total counter\nmock_content_filtered_total {}",
            self.content_filtered()
        );
        out.push_str("# HELP mock_responses_total Responses sent, by status.\n");
        out.push_str("# TYPE mock_responses_total counter\n");
        for status in self.responses.listed() {
            let n = self.responses(status);
            let _ = writeln!(out, "mock_responses_total{{status=\"{status}\"}} {n}");
        }
        out.push_str(
            "# HELP mock_requests_rejected_total API requests refused before an answer was drawn \
             (a bad body, a missing key, a body too large or too slow), by route; also counted in \
             mock_requests_total.\n# TYPE mock_requests_rejected_total counter\n",
        );
        for route in RouteKind::ALL.into_iter().filter(|r| r.is_api()) {
            let n = self.rejections(route);
            let _ = writeln!(
                out,
                "mock_requests_rejected_total{{route=\"{}\"}} {n}",
                route.label()
            );
        }
    }

    /// The counters and gauges of one value each.
    fn totals(&self, out: &mut String) {
        let gauges = [
            (
                "mock_connections_opened_total",
                "counter",
                "Connections accepted.",
                { self.connections_opened() as i64 },
            ),
            ("mock_connections_open", "gauge", "Connections open now.", {
                self.connections_open()
            }),
            ("mock_streams_open", "gauge", "Streams being sent now.", {
                self.streams_open()
            }),
            ("mock_accept_errors_total", "counter", "Failed accepts.", {
                self.accept_errors.load(Relaxed) as i64
            }),
            (
                "mock_over_capacity_total",
                "counter",
                "Requests answered 503 on connections past --max-connections.",
                self.over_capacity.load(Relaxed) as i64,
            ),
            (
                "mock_request_body_bytes_total",
                "counter",
                "Request body bytes read.",
                self.bytes_in.load(Relaxed) as i64,
            ),
            (
                "mock_response_body_bytes_total",
                "counter",
                "Response body bytes produced (whole bodies and stream events; no headers or chunk framing).",
                self.bytes_out.load(Relaxed) as i64,
            ),
        ];
        for (name, kind, help, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
    }

    /// The mock's own emission error, as a summary in seconds.
    fn emission(&self, out: &mut String) {
        let e = &self.emission_error;
        out.push_str(
            "# HELP mock_emission_error_seconds Actual minus scheduled time of delayed \
             responses and stream events.\n# TYPE mock_emission_error_seconds summary\n",
        );
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            let v = e.quantile_us(q) as f64 / 1e6;
            let _ = writeln!(out, "mock_emission_error_seconds{{quantile=\"{q}\"}} {v}");
        }
        let _ = writeln!(
            out,
            "mock_emission_error_seconds_sum {}\nmock_emission_error_seconds_count {}",
            e.sum_us() as f64 / 1e6,
            e.count()
        );
    }
}

const LINEAR: u64 = 16;
const SUB_BITS: u32 = 3;
const BUCKETS: usize = LINEAR as usize + (64 - 4) * (1 << SUB_BITS);

/// A lock-free histogram of microsecond values: exact below 16 µs, then eight buckets per
/// power of two.
#[derive(Debug)]
pub struct AtomicHistogram {
    buckets: Box<[AtomicU64; BUCKETS]>,
    count: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        AtomicHistogram {
            buckets: Box::new([const { AtomicU64::new(0) }; BUCKETS]),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

impl AtomicHistogram {
    fn bucket(value: u64) -> usize {
        if value < LINEAR {
            return value as usize;
        }
        let exp = 63 - value.leading_zeros(); // >= 4
        let sub = (value >> (exp - SUB_BITS)) & ((1 << SUB_BITS) - 1);
        LINEAR as usize + (exp as usize - 4) * (1 << SUB_BITS) + sub as usize
    }

    /// The largest value a bucket holds.
    fn upper(bucket: usize) -> u64 {
        if bucket < LINEAR as usize {
            return bucket as u64;
        }
        let i = bucket - LINEAR as usize;
        let exp = (i >> SUB_BITS) as u32 + 4;
        let sub = (i & ((1 << SUB_BITS) - 1)) as u64;
        let low = (1u64 << exp) + (sub << (exp - SUB_BITS));
        low.saturating_add((1u64 << (exp - SUB_BITS)) - 1)
    }

    /// Records one value.
    pub fn record(&self, value_us: u64) {
        self.buckets[Self::bucket(value_us)].fetch_add(1, Relaxed);
        self.count.fetch_add(1, Relaxed);
        self.sum.fetch_add(value_us, Relaxed);
        self.max.fetch_max(value_us, Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    pub fn sum_us(&self) -> u64 {
        self.sum.load(Relaxed)
    }

    pub fn max_us(&self) -> u64 {
        self.max.load(Relaxed)
    }

    /// The value at quantile `q` (0..=1), as the upper bound of its bucket (at most the maximum).
    pub fn quantile_us(&self, q: f64) -> u64 {
        let count = self.count();
        if count == 0 {
            return 0;
        }
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0;
        for (i, bucket) in self.buckets.iter().enumerate() {
            seen += bucket.load(Relaxed);
            if seen >= rank {
                return Self::upper(i).min(self.max_us());
            }
        }
        self.max_us()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_with_bounded_error() {
        for v in [
            0,
            1,
            15,
            16,
            17,
            100,
            1_000,
            123_456,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let b = AtomicHistogram::bucket(v);
            assert!(b < BUCKETS);
            let upper = AtomicHistogram::upper(b);
            assert!(upper >= v, "{v} -> {upper}");
            assert!(
                (upper - v) as f64 <= v as f64 * 0.125 + 1.0,
                "{v} -> {upper}"
            );
        }
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let h = AtomicHistogram::default();
        for v in 1..=1000 {
            h.record(v);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.max_us(), 1000);
        let p50 = h.quantile_us(0.5);
        assert!((500..=563).contains(&p50), "{p50}");
        assert_eq!(h.quantile_us(1.0), 1000);
    }

    #[test]
    fn prometheus_text_names_every_series() {
        let m = Metrics::default();
        m.request(RouteKind::ChatStream);
        m.response(200);
        m.emission_error.record(250);
        let text = m.to_prometheus();
        assert!(text.contains("mock_requests_total{route=\"chat_stream\"} 1"));
        assert!(text.contains("mock_responses_total{status=\"200\"} 1"));
        assert!(text.contains("mock_emission_error_seconds_count 1"));
    }
}
