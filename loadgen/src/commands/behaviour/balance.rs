//! Balance: several upstreams behind weights, then the first made slow for a window. Each
//! upstream's share before the window against the share its weight gives it, the slow one's
//! share in the window, and how long after the window opened the gateway took to send the slow
//! upstream under half its share for good (`shift_ms`: the middle of the first half second
//! from which on every half second of the window gave it less than half its weight's share).

use std::collections::BTreeMap;

use super::common::{error_rate, Figures};
use super::trial::Observed;

/// Steps in which the shift is looked for, and the span each step's share is taken over.
const STEP_NS: u64 = 50_000_000;
const SPAN_NS: u64 = 500_000_000;
/// The slow upstream's index.
const SLOW: usize = 0;

/// Each upstream's share of the arrivals in `[from, until)`.
pub fn shares(observed: &Observed, from: u64, until: u64) -> Vec<f64> {
    let counts: Vec<usize> = observed
        .arrivals
        .iter()
        .map(|a| {
            a.iter()
                .filter(|x| x.t_ns >= from && x.t_ns < until)
                .count()
        })
        .collect();
    let total: usize = counts.iter().sum();
    counts
        .iter()
        .map(|&c| {
            if total == 0 {
                0.0
            } else {
                c as f64 / total as f64
            }
        })
        .collect()
}

/// A trial's balance figures, each upstream's (before, during) shares, and notes.
pub fn figures(
    observed: &Observed,
    names: &[String],
    weights: &BTreeMap<String, f64>,
) -> (Figures, Vec<String>, Vec<(f64, f64)>) {
    let mut f = Figures::new();
    let mut notes = Vec::new();
    let total_weight: f64 = names
        .iter()
        .map(|n| weights.get(n).copied().unwrap_or(1.0))
        .sum();
    let expected: Vec<f64> = names
        .iter()
        .map(|n| weights.get(n).copied().unwrap_or(1.0) / total_weight.max(f64::MIN_POSITIVE))
        .collect();
    let (from, until) = observed
        .window
        .unwrap_or((observed.end_ns, observed.end_ns));
    let before = shares(observed, observed.start_ns, from);
    let during = shares(observed, from, until);
    let off = before
        .iter()
        .zip(&expected)
        .map(|(s, e)| (s - e).abs())
        .fold(0.0, f64::max);
    f.insert("share_off_weight_max".into(), Some(off));
    f.insert("slow_share_before".into(), before.first().copied());
    f.insert("slow_share_window".into(), during.first().copied());
    f.insert("error_rate".into(), error_rate(observed.sent.iter()));
    let half = expected[SLOW] / 2.0;
    // The last step at which the slow upstream still had half its share or more; the shift is
    // the step after it, when there is one inside the window.
    let mut steps = Vec::new();
    let mut t = from;
    while t + STEP_NS <= until {
        steps.push((
            t,
            shares(observed, t, (t + SPAN_NS).min(until))[SLOW] >= half,
        ));
        t += STEP_NS;
    }
    // A span's share falls under half as it straddles the change by half its length: the
    // change is half a span after the span's start.
    let shift = match steps.iter().rposition(|&(_, held)| held) {
        None if !steps.is_empty() => Some(0.0),
        Some(last) if last + 1 < steps.len() && steps[last + 1].0 + SPAN_NS <= until => {
            Some((steps[last + 1].0 + SPAN_NS / 2 - from) as f64 / 1e6)
        }
        _ => None,
    };
    if shift.is_none() {
        notes.push("shift_ms: never within the window".into());
    }
    f.insert("shift_ms".into(), shift);
    (f, notes, before.into_iter().zip(during).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::steering::Arrival;

    fn arrival(t_ns: u64) -> Arrival {
        Arrival {
            i: 0,
            t_ns,
            seq: None,
            user: None,
            key: None,
            status: 200,
            cut: false,
        }
    }

    #[test]
    fn shares_follow_the_weights_and_the_shift_is_found() {
        const S: u64 = 1_000_000_000;
        // Before the window (0..2 s): 3 to a for 1 to b every 100 ms. In it (2..4 s): a keeps
        // its share for 500 ms, then gets nothing.
        let mut a = Vec::new();
        let mut b = Vec::new();
        for k in 0..80u64 {
            let t = k * S / 20;
            if k % 4 == 3 {
                b.push(arrival(t));
            } else if t < 2 * S + S / 2 {
                a.push(arrival(t));
            } else {
                b.push(arrival(t));
            }
        }
        let observed = Observed {
            sent: Vec::new(),
            start_ns: 0,
            end_ns: 4 * S,
            arrivals: vec![a, b],
            window: Some((2 * S, 4 * S)),
            dropped: 0,
        };
        let names = ["a".to_string(), "b".to_string()];
        let weights = BTreeMap::from([("a".to_string(), 3.0), ("b".to_string(), 1.0)]);
        let (f, notes, shares) = figures(&observed, &names, &weights);
        assert_eq!(shares[0].0, 0.75);
        assert_eq!(f["share_off_weight_max"], Some(0.0));
        let shift = f["shift_ms"].unwrap();
        assert!((450.0..=550.0).contains(&shift), "shift {shift} ms");
        assert!(notes.is_empty(), "{notes:?}");
    }
}
