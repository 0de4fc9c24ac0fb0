//! The metrics a run records, by name, and a histogram's summary as a result carries it.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A recorded metric. Times are microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    /// Completion − intended start: the CO-corrected headline (stream: e2e from the schedule).
    ResponseTime,
    /// Completion − actual send (stream: e2e from the send).
    ServiceTime,
    /// Dispatch − intended start: the generator's own timing error (a session request, less
    /// its `BuildTime`).
    ScheduleLag,
    /// Actual send − dispatch: time waiting for a free or new connection.
    ConnectionWait,
    /// Actual send − dispatch, less the time the target held every connection (its handshake,
    /// or all busy until one's answer was read in full): the generator's own delay after
    /// dispatch, as a freed connection it had not yet noticed.
    SendDelay,
    /// A session's request: body ready − the later of its intended start and the end of the
    /// answer before it on its line (or its task's start): the client's own work on the
    /// history and the body that held it back (0 for a body built during a think time).
    BuildTime,
    /// First body byte − intended start.
    Ttfb,
    /// First body byte − actual send.
    TtfbService,
    /// First output event − intended start.
    Ttft,
    /// First output event − actual send.
    TtftService,
    /// Gap between consecutive output events.
    Itl,
    /// (e2e − TTFT) / (output tokens − 1), from the send.
    Tpot,
    /// Output events per stream (a count, not a time).
    OutputChunks,
    /// Output tokens per stream (usage when reported, else output events; a count).
    OutputTokens,
}

impl Metric {
    pub const ALL: [Metric; 14] = [
        Metric::ResponseTime,
        Metric::ServiceTime,
        Metric::ScheduleLag,
        Metric::ConnectionWait,
        Metric::SendDelay,
        Metric::BuildTime,
        Metric::Ttfb,
        Metric::TtfbService,
        Metric::Ttft,
        Metric::TtftService,
        Metric::Itl,
        Metric::Tpot,
        Metric::OutputChunks,
        Metric::OutputTokens,
    ];

    /// The metric's name in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            Metric::ResponseTime => "response_time",
            Metric::ServiceTime => "service_time",
            Metric::ScheduleLag => "schedule_lag",
            Metric::ConnectionWait => "connection_wait",
            Metric::SendDelay => "send_delay",
            Metric::BuildTime => "build_time",
            Metric::Ttfb => "ttfb",
            Metric::TtfbService => "ttfb_service",
            Metric::Ttft => "ttft",
            Metric::TtftService => "ttft_service",
            Metric::Itl => "itl",
            Metric::Tpot => "tpot",
            Metric::OutputChunks => "output_chunks",
            Metric::OutputTokens => "output_tokens",
        }
    }

    /// The metric named `name` in results.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// True for times (microseconds); false for counts.
    pub fn is_time(self) -> bool {
        !matches!(self, Metric::OutputChunks | Metric::OutputTokens)
    }
}

/// A histogram's summary. Times in microseconds (counts for output_chunks and output_tokens).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    #[serde(default)]
    pub min: u64,
    #[serde(default)]
    pub mean: f64,
    #[serde(default)]
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

/// The metrics a run reports: all for streams; the stream-only ones are left out otherwise, and
/// `build_time` is a session run's (see [`reported_by`]).
pub fn reported(stream: bool) -> impl Iterator<Item = Metric> {
    reported_by(stream, false)
}

/// The metrics a run of single requests (`sessions` false) or of sessions reports.
pub fn reported_by(stream: bool, sessions: bool) -> impl Iterator<Item = Metric> {
    Metric::ALL.into_iter().filter(move |m| {
        (sessions || *m != Metric::BuildTime)
            && (stream
                || !matches!(
                    m,
                    Metric::Ttft
                        | Metric::TtftService
                        | Metric::Itl
                        | Metric::Tpot
                        | Metric::OutputChunks
                        | Metric::OutputTokens
                ))
    })
}
