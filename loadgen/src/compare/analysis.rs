//! From alternating rate trials to "at p99 the gateway adds X µs (95% interval across trials)".
//!
//! Trial k of the direct target and trial k of a gateway ran one after the other under the same
//! load; the per-trial difference of a percentile is their paired difference, and the interval is
//! Student's t over the trials' differences. The t tests of every gateway and percentile are
//! Holm-adjusted together, so a verdict's 5% error rate holds for the whole table.

use gatebench_shared::stats::{median, t_interval_95, Interval};
use gatebench_shared::trials::{holm, AcrossTrials};
use serde::{Deserialize, Serialize};

use crate::report::overhead::micros;
use crate::report::table::Table;

/// The response-time percentiles compared, with their names in results.
pub const PERCENTILES: [&str; 4] = ["p50", "p90", "p99", "p999"];

/// One trial's figures of one target, as the analysis needs them.
#[derive(Debug, Clone)]
pub struct TrialFigures {
    pub requests: u64,
    pub ok: u64,
    pub throughput: f64,
    /// Response time (µs) at each of [`PERCENTILES`].
    pub percentiles_us: [f64; 4],
}

/// One target over all its trials: the seven-gateway table's row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetSummary {
    pub name: String,
    pub trials: usize,
    pub requests: u64,
    pub ok: u64,
    /// Mean over the trials, successful responses per second.
    pub throughput: f64,
    pub success_rate: f64,
    /// Median over the trials of each percentile, µs.
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
}

/// What a gateway adds at one percentile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PercentileDelta {
    pub gateway: String,
    pub percentile: String,
    /// gateway − direct for each trial, µs.
    pub per_trial_us: Vec<f64>,
    /// Mean of the per-trial differences with a 95% t interval (needs two trials or more).
    pub added_us: Option<Interval>,
    /// The t test's p-value ("adds nothing"), Holm-adjusted over every gateway and percentile
    /// of the result (needs two trials or more).
    #[serde(default)]
    pub p_adjusted: Option<f64>,
}

impl PercentileDelta {
    pub fn verdict(&self) -> &'static str {
        let found = self
            .p_adjusted
            .is_some_and(|p| p < crate::overhead::verdict::ALPHA);
        match self.added_us {
            None => "one trial: no interval",
            Some(i) if !found || i.contains_zero() => "not distinguishable from direct",
            Some(i) if i.estimate > 0.0 => "adds latency",
            Some(_) => "faster than direct",
        }
    }

    /// The unadjusted p-value of "adds nothing" (a t test over the trials' differences).
    fn p_value(&self) -> Option<f64> {
        AcrossTrials::of_estimates(&self.per_trial_us).map(|a| a.p_value_beyond(0.0))
    }
}

/// Sets every delta's Holm-adjusted p-value (those with two trials or more form the family).
pub fn adjust(deltas: &mut [PercentileDelta]) {
    let tested: Vec<(usize, f64)> = deltas
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i, d.p_value()?)))
        .collect();
    let adjusted = holm(&tested.iter().map(|(_, p)| *p).collect::<Vec<_>>());
    for ((i, _), p) in tested.iter().zip(adjusted) {
        deltas[*i].p_adjusted = Some(p);
    }
}

/// Summaries per target, from each target's trials.
pub fn summarise(name: &str, trials: &[TrialFigures]) -> TargetSummary {
    let requests = trials.iter().map(|t| t.requests).sum();
    let ok = trials.iter().map(|t| t.ok).sum();
    let mid = |i: usize| {
        median(
            &trials
                .iter()
                .map(|t| t.percentiles_us[i])
                .collect::<Vec<_>>(),
        )
        .unwrap_or(f64::NAN)
    };
    TargetSummary {
        name: name.to_string(),
        trials: trials.len(),
        requests,
        ok,
        throughput: trials.iter().map(|t| t.throughput).sum::<f64>() / trials.len().max(1) as f64,
        success_rate: if requests == 0 {
            0.0
        } else {
            ok as f64 / requests as f64
        },
        p50_us: mid(0),
        p90_us: mid(1),
        p99_us: mid(2),
        p999_us: mid(3),
    }
}

/// The deltas of `gateway` against `direct`, trial by trial (the shorter list decides).
pub fn deltas(
    gateway: &str,
    direct: &[TrialFigures],
    theirs: &[TrialFigures],
) -> Vec<PercentileDelta> {
    PERCENTILES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let per_trial: Vec<f64> = direct
                .iter()
                .zip(theirs)
                .map(|(d, g)| g.percentiles_us[i] - d.percentiles_us[i])
                .collect();
            PercentileDelta {
                gateway: gateway.to_string(),
                percentile: name.to_string(),
                added_us: t_interval_95(&per_trial),
                per_trial_us: per_trial,
                p_adjusted: None,
            }
        })
        .collect()
}

/// requests, throughput, success, P50, P99, P99.9 per target.
pub fn summary_table(summaries: &[TargetSummary]) -> Table {
    let mut table = Table::new(&[
        "target",
        "trials",
        "requests",
        "throughput (req/s)",
        "success",
        "P50",
        "P99",
        "P99.9",
    ]);
    for s in summaries {
        table.push(vec![
            s.name.clone(),
            s.trials.to_string(),
            s.requests.to_string(),
            format!("{:.1}", s.throughput),
            format!("{:.2}%", s.success_rate * 100.0),
            micros(s.p50_us),
            micros(s.p99_us),
            micros(s.p999_us),
        ]);
    }
    table
}

/// Per gateway and percentile: the added latency across trials.
pub fn delta_table(deltas: &[PercentileDelta]) -> Table {
    let mut table = Table::new(&[
        "gateway",
        "percentile",
        "trials",
        "added (mean)",
        "95% interval",
        "verdict",
    ]);
    let signed = |us: f64| {
        if us >= 0.0 {
            format!("+{}", micros(us))
        } else {
            micros(us)
        }
    };
    for d in deltas {
        table.push(vec![
            d.gateway.clone(),
            d.percentile.clone(),
            d.per_trial_us.len().to_string(),
            d.added_us
                .map_or_else(|| "-".into(), |i| signed(i.estimate)),
            d.added_us.map_or_else(
                || "-".into(),
                |i| format!("[{}, {}]", signed(i.low), signed(i.high)),
            ),
            d.verdict().to_string(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(p: [f64; 4]) -> TrialFigures {
        TrialFigures {
            requests: 100,
            ok: 99,
            throughput: 99.0,
            percentiles_us: p,
        }
    }

    #[test]
    fn differences_are_paired_by_trial() {
        let direct = [
            figures([100.0, 200.0, 400.0, 800.0]),
            figures([120.0, 220.0, 900.0, 1_000.0]),
            figures([110.0, 210.0, 500.0, 900.0]),
        ];
        let gateway = [
            figures([150.0, 260.0, 420.0, 800.0]),
            figures([170.0, 280.0, 880.0, 1_100.0]),
            figures([160.0, 270.0, 520.0, 700.0]),
        ];
        let mut d = deltas("gw", &direct, &gateway);
        adjust(&mut d);
        assert_eq!(d[0].per_trial_us, [50.0, 50.0, 50.0]);
        let p50 = d[0].added_us.unwrap();
        assert_eq!((p50.estimate, p50.low, p50.high), (50.0, 50.0, 50.0));
        assert_eq!(d[0].verdict(), "adds latency");
        // p99: +20, −20, +20 → mean 6.7, an interval around zero.
        assert_eq!(d[2].verdict(), "not distinguishable from direct");
        let s = summarise("gw", &gateway);
        assert_eq!((s.requests, s.ok, s.trials), (300, 297, 3));
        assert_eq!(s.p50_us, 160.0);
        assert!(deltas("gw", &direct[..1], &gateway[..1])[0]
            .added_us
            .is_none());
    }
}
