//! Each figure over the trials: the mean of the trials' values with a Student's t interval
//! (95%, k − 1 degrees of freedom); none when any trial had none, said with the reason (a
//! switch over that never happened within the window in one trial is not averaged away).

use std::collections::{BTreeMap, BTreeSet};

use gatebench_shared::trials::AcrossTrials;

use super::common::Figures;
use crate::results::behaviour::Figure;

const CONFIDENCE: f64 = 0.95;

/// How a value of figure `name` reads.
fn said_value(name: &str, v: f64) -> String {
    if name.ends_with("_ms") {
        format!("{v:.1} ms")
    } else if name.contains("rate")
        || name.contains("share")
        || name.contains("honoured")
        || name.contains("of_limit")
    {
        format!("{:.1}%", v * 100.0)
    } else {
        format!("{v:.2}")
    }
}

/// Where a figure's values can lie: shares in [0, 1], counts and times at or above 0 (a
/// difference of times, like `failover_penalty_ms`, anywhere). An interval is cut to it.
fn bounds(name: &str) -> (f64, f64) {
    if name.contains("rate") || name.contains("share") || name.contains("honoured") {
        (0.0, 1.0)
    } else if name.contains("penalty") {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        (0.0, f64::INFINITY)
    }
}

/// The figures of `trials` by name; `why_none` says why a figure is missing from a trial.
pub fn combine(
    trials: &[Figures],
    why_none: &BTreeMap<String, String>,
) -> BTreeMap<String, Figure> {
    let names: BTreeSet<&String> = trials.iter().flat_map(|t| t.keys()).collect();
    let mut out = BTreeMap::new();
    for name in names {
        let per_trial: Vec<Option<f64>> = trials
            .iter()
            .map(|t| t.get(name).copied().flatten())
            .collect();
        let values: Vec<f64> = per_trial.iter().flatten().copied().collect();
        let missing = per_trial.len() - values.len();
        let figure = if missing > 0 {
            let why = why_none.get(name).map_or("not measured", String::as_str);
            Figure {
                estimate: None,
                low: None,
                high: None,
                said: format!("{why} ({missing} of {} trials)", per_trial.len()),
                per_trial,
            }
        } else {
            match AcrossTrials::of_estimates(&values) {
                Some(across) => {
                    let mut i = across.interval(CONFIDENCE);
                    let (least, most) = bounds(name);
                    (i.low, i.high) = (i.low.max(least), i.high.min(most));
                    Figure {
                        estimate: Some(i.estimate),
                        low: Some(i.low),
                        high: Some(i.high),
                        said: format!(
                            "{} [{}, {}]",
                            said_value(name, i.estimate),
                            said_value(name, i.low),
                            said_value(name, i.high)
                        ),
                        per_trial,
                    }
                }
                None => Figure {
                    estimate: values.first().copied(),
                    low: None,
                    high: None,
                    said: format!(
                        "{} (one trial: no interval)",
                        values
                            .first()
                            .map_or(String::new(), |&v| said_value(name, v))
                    ),
                    per_trial,
                },
            }
        };
        out.insert(name.clone(), figure);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_combine_with_an_interval_or_say_why_not() {
        let t = |v: Option<f64>, a: f64| {
            Figures::from([
                ("switch_over_ms".to_string(), v),
                ("amplification".to_string(), Some(a)),
            ])
        };
        let why = BTreeMap::from([(
            "switch_over_ms".to_string(),
            "never within the window".to_string(),
        )]);
        let all = combine(
            &[t(Some(10.0), 2.0), t(Some(12.0), 2.0), t(Some(14.0), 2.0)],
            &why,
        );
        let s = &all["switch_over_ms"];
        assert_eq!(s.estimate, Some(12.0));
        assert!(s.low.unwrap() < 12.0 && s.high.unwrap() > 12.0);
        assert_eq!(all["amplification"].said, "2.00 [2.00, 2.00]");
        let shares = |v: f64| Figures::from([("hit_rate".to_string(), Some(v))]);
        let cut = combine(&[shares(0.9), shares(1.0), shares(1.0)], &why);
        assert_eq!(cut["hit_rate"].high, Some(1.0), "a share is never above 1");
        let some = combine(&[t(Some(10.0), 2.0), t(None, 2.0)], &why);
        assert_eq!(some["switch_over_ms"].estimate, None);
        assert_eq!(
            some["switch_over_ms"].said,
            "never within the window (1 of 2 trials)"
        );
        let one = combine(&[t(Some(10.0), 2.0)], &why);
        assert_eq!(
            one["switch_over_ms"].said,
            "10.0 ms (one trial: no interval)"
        );
    }
}
