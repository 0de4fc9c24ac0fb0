//! HdrHistogram interval logs (`.hlog`): one histogram per second of a metric, in the text format
//! of HdrHistogram's `HistogramLogWriter` (version 1.3), so `HistogramLogProcessor`, the other
//! HdrHistogram libraries and `loadgen merge` read them.

use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use crate::results::metric::Metric;
use crate::results::series::Series;

/// The log's first line, after the comments: the column names HdrHistogram's writer prints.
pub const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// What a log says of itself in its comments.
#[derive(Debug, Clone)]
pub struct LogHeader<'a> {
    pub metric: &'a str,
    /// Whose values these are, for a reader: target, scenario, shard.
    pub about: String,
    /// Start of the measured window (second 0), µs since the epoch.
    pub base_unix_us: i64,
    /// True for times (µs), false for counts.
    pub time: bool,
}

/// An interval log of `seconds` (second `i` starts `i` s after the header's base time).
pub fn interval_log(header: &LogHeader<'_>, seconds: &Series) -> String {
    let one = Duration::from_secs(1);
    let intervals = (0..seconds.len()).filter_map(|i| {
        seconds
            .get(i)
            .map(|h| (Duration::from_secs(i as u64), one, h))
    });
    write_log(header, intervals)
}

/// A log of intervals `(start after the base time, length, histogram)`, in order.
pub fn write_log(
    header: &LogHeader<'_>,
    intervals: impl Iterator<Item = (Duration, Duration, Histogram<u64>)>,
) -> String {
    let mut out = head(header);
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    // Invariant: writing to a Vec cannot fail, nor can compressing a valid histogram.
    let mut writer = IntervalLogWriterBuilder::new()
        .begin_log_with(&mut bytes, &mut serializer)
        .expect("writes to memory");
    for (start, length, h) in intervals {
        writer
            .write_histogram(&h, start, length, None)
            .expect("writes to memory");
    }
    out.push_str(&String::from_utf8_lossy(&bytes));
    out
}

/// The comments and the legend of a log.
pub fn head(header: &LogHeader<'_>) -> String {
    let base = header.base_unix_us as f64 / 1e6;
    let base_text = std::time::UNIX_EPOCH
        .checked_add(Duration::from_micros(header.base_unix_us.max(0) as u64))
        .map(crate::generator::start_at::format)
        .unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#[Logged with gatebench loadgen {}: {}, {}]",
        env!("CARGO_PKG_VERSION"),
        header.metric,
        header.about
    );
    let _ = writeln!(
        out,
        "#[Values are {}; one interval per second of the measured window, by completion time]",
        if header.time {
            "microseconds (Interval_Max too)"
        } else {
            "counts"
        }
    );
    let _ = writeln!(out, "#[Histogram log format version 1.3]");
    let _ = writeln!(
        out,
        "#[StartTime: {base:.3} (seconds since epoch), {base_text}]"
    );
    let _ = writeln!(out, "#[BaseTime: {base:.3} (seconds since epoch)]");
    let _ = writeln!(out, "{LEGEND}");
    out
}

/// The file name of a metric's log: `RUN-SCENARIO.METRIC.hlog` (RUN counts from 1).
pub fn file_name(run: usize, scenario: &str, metric: Metric) -> String {
    format!("{run}-{scenario}.{}.hlog", metric.name())
}
