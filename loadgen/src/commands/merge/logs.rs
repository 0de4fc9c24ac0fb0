//! Adding interval logs of one metric from several shards: intervals that start at the same
//! instant (base time + timestamp) are added into one, so the merged log is what one process
//! recording every shard's requests would have written.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::Histogram;

use super::{name, Merged};
use crate::generator::histogram::new_histogram;
use crate::report::hlog::{write_log, LogHeader};
use crate::results::hdr_codec::decode;

/// One log read: its metric (from loadgen's header comment, when there) and its intervals as
/// (start in µs since the epoch, length, histogram).
#[derive(Debug)]
pub struct Log {
    pub metric: Option<String>,
    pub intervals: Vec<(i64, Duration, Histogram<u64>)>,
}

/// Reads an interval log.
pub fn read(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<Log> {
    let text = String::from_utf8_lossy(bytes);
    let metric = text
        .lines()
        .find_map(|l| l.strip_prefix("#[Logged with gatebench loadgen "))
        .and_then(|rest| rest.split_once(": "))
        .and_then(|(_, rest)| rest.split(',').next())
        .map(str::to_string);
    let mut base_us = 0i64;
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(bytes) {
        match entry.map_err(|e| anyhow!("{} is not an interval log: {e:?}", name(path)))? {
            LogEntry::BaseTime(t) => base_us = t.as_micros() as i64,
            LogEntry::StartTime(t) if base_us == 0 => base_us = t.as_micros() as i64,
            LogEntry::StartTime(_) => {}
            LogEntry::Interval(i) => {
                let h = decode(i.encoded_histogram()).map_err(|e| {
                    anyhow!("{}: interval at {:?}: {e}", name(path), i.start_timestamp())
                })?;
                let start = base_us + i.start_timestamp().as_micros() as i64;
                intervals.push((start, i.duration(), h));
            }
        }
    }
    if intervals.is_empty() {
        bail!(
            "{} holds no intervals: it is not an interval log",
            name(path)
        );
    }
    Ok(Log { metric, intervals })
}

/// Merges interval logs (file, bytes) of one metric into one log and a report of its total.
pub fn merge(inputs: &[(PathBuf, Vec<u8>)]) -> anyhow::Result<Merged> {
    let mut logs = Vec::new();
    for (path, bytes) in inputs {
        logs.push((path, read(path, bytes)?));
    }
    let Some(&(first, ref first_log)) = logs.first() else {
        bail!("nothing to merge: give the interval logs");
    };
    let metric = first_log.metric.clone();
    for (path, log) in &logs[1..] {
        if log.metric != metric {
            bail!(
                "{} logs {} but {} logs {}: merge the logs of one metric at a time",
                name(path),
                log.metric.as_deref().unwrap_or("an unnamed metric"),
                name(first),
                metric.as_deref().unwrap_or("an unnamed metric")
            );
        }
    }
    // Intervals keyed by their start to the millisecond (timestamps have three decimals) and
    // length: those of the shards' same second add up.
    let mut by_start: BTreeMap<(i64, Duration), Histogram<u64>> = BTreeMap::new();
    let mut total = new_histogram(3);
    for (_, log) in &logs {
        for (start, length, h) in &log.intervals {
            let sum = by_start
                .entry((start.div_euclid(1_000), *length))
                .or_insert_with(|| new_histogram(3));
            sum.add(h)
                .map_err(|e| anyhow!("intervals do not add: {e:?}"))?;
            total
                .add(h)
                .map_err(|e| anyhow!("intervals do not add: {e:?}"))?;
        }
    }
    let base_ms = by_start.keys().next().map_or(0, |(start, _)| *start);
    let metric_name = metric.unwrap_or_else(|| "values".into());
    let header = LogHeader {
        metric: &metric_name,
        about: format!("merged from {} logs", logs.len()),
        base_unix_us: base_ms * 1_000,
        time: !metric_name.starts_with("output_"),
    };
    let report = log_report(&metric_name, logs.len(), by_start.len(), &total);
    let intervals = by_start.into_iter().map(|((start_ms, length), h)| {
        let offset = Duration::from_millis((start_ms - base_ms) as u64);
        (offset, length, h)
    });
    Ok(Merged {
        output: write_log(&header, intervals),
        report,
        valid: true,
        failed: Vec::new(),
    })
}

fn log_report(metric: &str, logs: usize, intervals: usize, total: &Histogram<u64>) -> String {
    let q = |q: f64| total.value_at_quantile(q);
    format!(
        "{metric}: {logs} logs, {intervals} intervals, {} values\n  \
         p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n",
        total.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        total.max()
    )
}
