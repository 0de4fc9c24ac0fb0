//! What every scenario's figures share: the phase a request fell in, medians and error rates
//! of a set of requests, amplification, the gaps between a request's attempts, and each
//! second's row of the timeline.

use std::collections::BTreeMap;

use gatebench_shared::stats::{median, quantile_of_sorted};

use super::join::Joined;
use super::trial::Observed;
use crate::engine::logged::Sent;
use crate::results::behaviour::{Second, Trial};

/// A trial's figures by name; `None` where the trial had none.
pub type Figures = BTreeMap<String, Option<f64>>;

/// Before, in or after the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Before,
    Window,
    After,
}

impl Phase {
    pub fn of(t_ns: u64, window: Option<(u64, u64)>) -> Phase {
        match window {
            Some((from, _)) if t_ns < from => Phase::Before,
            Some((_, until)) if t_ns < until => Phase::Window,
            Some(_) => Phase::After,
            None => Phase::Before,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Phase::Before => "before",
            Phase::Window => "window",
            Phase::After => "after",
        }
    }
}

/// Share of `sent` that failed.
pub fn error_rate<'a>(sent: impl Iterator<Item = &'a Sent>) -> Option<f64> {
    let (mut n, mut failed) = (0u64, 0u64);
    for s in sent {
        n += 1;
        failed += u64::from(s.error.is_some());
    }
    (n > 0).then(|| failed as f64 / n as f64)
}

/// Median latency (ms, from the intended send) of `sent`.
pub fn median_ms<'a>(sent: impl Iterator<Item = &'a Sent>) -> Option<f64> {
    let v: Vec<f64> = sent.map(Sent::latency_ms).collect();
    median(&v)
}

/// A quantile of `values`.
pub fn quantile(values: &mut [f64], q: f64) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    quantile_of_sorted(values, q)
}

/// Upstream requests per client request: the attempts that carried this trial's marks when
/// the marks came through, else every arrival in the trial.
pub fn amplification(observed: &Observed, joined: &Joined) -> Option<f64> {
    let arrivals = if joined.by_marks() {
        joined.marked as usize
    } else {
        observed.arrivals.iter().map(Vec::len).sum()
    };
    let n = observed.sent.len();
    (n > 0).then(|| arrivals as f64 / n as f64)
}

/// The gaps (ms) between each request's consecutive attempts.
pub fn retry_gaps_ms(joined: &Joined) -> Vec<f64> {
    let mut gaps = Vec::new();
    for attempts in joined.attempts.values() {
        for pair in attempts.windows(2) {
            gaps.push(pair[1].t_ns.saturating_sub(pair[0].t_ns) as f64 / 1e6);
        }
    }
    gaps
}

/// The figures and counts every scenario reports, and its timeline.
pub fn trial_record(
    observed: &Observed,
    joined: &Joined,
    names: &[String],
    figures: Figures,
) -> Trial {
    let mut errors = BTreeMap::new();
    for s in &observed.sent {
        if let Some(kind) = s.error {
            *errors.entry(kind.key()).or_insert(0) += 1;
        }
    }
    let mut upstream_requests = BTreeMap::new();
    let mut upstream_by_status = BTreeMap::new();
    for (name, arrivals) in names.iter().zip(&observed.arrivals) {
        upstream_requests.insert(name.clone(), arrivals.len() as u64);
        for a in arrivals {
            *upstream_by_status.entry(a.status.to_string()).or_insert(0) += 1;
        }
    }
    Trial {
        requests: observed.sent.len() as u64,
        ok: observed.sent.iter().filter(|s| s.error.is_none()).count() as u64,
        errors,
        upstream_requests,
        upstream_by_status,
        unmarked: joined.unmarked,
        figures,
        seconds: seconds(observed, names),
    }
}

/// Each second of the load: what the client sent and got, what each upstream received.
fn seconds(observed: &Observed, names: &[String]) -> Vec<Second> {
    let start = observed.start_ns;
    let last = observed
        .arrivals
        .iter()
        .flatten()
        .map(|a| a.t_ns)
        .chain(observed.sent.iter().map(|s| s.done_ns))
        .fold(observed.end_ns, u64::max);
    let count = (last.saturating_sub(start) / 1_000_000_000 + 1) as usize;
    let mut rows: Vec<Second> = (0..count)
        .map(|s| {
            let mid = start + s as u64 * 1_000_000_000 + 500_000_000;
            Second {
                second: s as u64,
                phase: Phase::of(mid, observed.window).name().into(),
                by_upstream: names.iter().map(|n| (n.clone(), 0)).collect(),
                ..Second::default()
            }
        })
        .collect();
    let index = |t: u64| (t.saturating_sub(start) / 1_000_000_000) as usize;
    let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); count];
    for s in &observed.sent {
        let i = index(s.due_ns).min(count - 1);
        rows[i].sent += 1;
        rows[i].errors += u64::from(s.error.is_some());
        latencies[i].push(s.latency_ms());
    }
    for (name, arrivals) in names.iter().zip(&observed.arrivals) {
        for a in arrivals {
            if let Some(row) = rows.get_mut(index(a.t_ns)) {
                *row.by_upstream.entry(name.clone()).or_insert(0) += 1;
            }
        }
    }
    for (row, mut l) in rows.iter_mut().zip(latencies) {
        row.p50_ms = quantile(&mut l, 0.5);
        row.p99_ms = quantile(&mut l, 0.99);
    }
    rows
}
