//! From paired calls to "the gateway adds X µs (95% interval [a, b])".
//!
//! For each gateway and metric the per-round differences gateway − direct are taken over the
//! rounds where both calls succeeded; the estimate is their median, with a seeded percentile
//! bootstrap interval. Pairing cancels what the rounds share (the mock's drawn latency, the
//! machine's state at that moment), so the interval is far narrower than a comparison of two
//! separate distributions would be.

use gatebench_shared::stats::{bootstrap_median, median};

use super::rounds::TargetCalls;
use crate::engine::paired::Call;
use crate::results::overhead::Delta;

impl Delta {
    /// The verdict in words.
    pub fn verdict(&self) -> &'static str {
        match (self.distinguishable, self.added_us.estimate > 0.0) {
            (false, _) => "not distinguishable from direct",
            (true, true) => "adds latency",
            (true, false) => "faster than direct",
        }
    }
}

/// The metrics compared: end to end, time to first token for streams, and the two legs when
/// the calls carry them (a metric no pair has is left out).
fn metrics(stream: bool) -> &'static [&'static str] {
    if stream {
        &["e2e", "ttft", "request_leg", "response_leg"]
    } else {
        &["e2e", "request_leg", "response_leg"]
    }
}

fn value(call: &Call, metric: &str) -> Option<f64> {
    match metric {
        "e2e" => Some(call.e2e_us),
        "ttft" => call.ttft_us,
        "request_leg" => call.request_leg_us,
        _ => call.response_leg_us,
    }
}

/// Deltas of every gateway (targets after the first) against the direct target (the first).
pub fn deltas(
    names: &[crate::model::role::Role],
    targets: &[TargetCalls],
    stream: bool,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Vec<Delta> {
    let Some(direct) = targets.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (g, gateway) in targets.iter().enumerate().skip(1) {
        for (m, &metric) in metrics(stream).iter().enumerate() {
            let pairs: Vec<(f64, f64)> = direct
                .calls
                .iter()
                .zip(&gateway.calls)
                .filter_map(|(d, g)| {
                    Some((value(d.as_ref()?, metric)?, value(g.as_ref()?, metric)?))
                })
                .collect();
            let differences: Vec<f64> = pairs.iter().map(|(d, g)| g - d).collect();
            let bootstrap_seed = seed ^ ((g as u64) << 8) ^ m as u64;
            let Some(added) = bootstrap_median(&differences, resamples, confidence, bootstrap_seed)
            else {
                continue;
            };
            let column = |pick: fn(&(f64, f64)) -> f64| {
                median(&pairs.iter().map(pick).collect::<Vec<_>>()).unwrap_or(f64::NAN)
            };
            out.push(Delta {
                gateway: names[g].clone(),
                metric: metric.to_string(),
                pairs: pairs.len(),
                direct_median_us: column(|p| p.0),
                gateway_median_us: column(|p| p.1),
                added_us: added,
                distinguishable: !added.contains_zero(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::role::Role;

    fn calls(values: impl IntoIterator<Item = Option<f64>>) -> TargetCalls {
        TargetCalls {
            calls: values
                .into_iter()
                .map(|v| {
                    v.map(|e2e_us| Call {
                        e2e_us,
                        ttft_us: Some(e2e_us / 2.0),
                        request_leg_us: None,
                        response_leg_us: None,
                    })
                })
                .collect(),
            ..TargetCalls::default()
        }
    }

    #[test]
    fn pairs_cancel_what_rounds_share() {
        // The direct latency swings by 10 ms from round to round; the gateway adds 500 µs ± 2.
        let direct: Vec<f64> = (0..150)
            .map(|i| 1_000.0 + (i % 7) as f64 * 1_500.0)
            .collect();
        let gateway: Vec<f64> = direct
            .iter()
            .enumerate()
            .map(|(i, d)| d + 500.0 + (i % 5) as f64 - 2.0)
            .collect();
        let names = [Role::Direct, "gw".into()];
        let targets = [
            calls(direct.iter().copied().map(Some)),
            calls(gateway.iter().copied().map(Some)),
        ];
        let d = deltas(&names, &targets, true, 2_000, 0.95, 1);
        assert_eq!(d.len(), 2);
        let e2e = &d[0];
        assert_eq!((e2e.metric.as_str(), e2e.pairs), ("e2e", 150));
        assert!((e2e.added_us.estimate - 500.0).abs() <= 2.0, "{e2e:?}");
        assert!(e2e.added_us.width() <= 4.0, "{e2e:?}");
        assert!(e2e.distinguishable);
        assert_eq!(e2e.verdict(), "adds latency");
        assert!((d[1].added_us.estimate - 250.0).abs() <= 1.0, "{:?}", d[1]);
    }

    #[test]
    fn failed_calls_drop_their_round_and_equal_targets_are_indistinguishable() {
        let direct: Vec<Option<f64>> = (0..100).map(|i| Some(100.0 + (i % 9) as f64)).collect();
        let mut same = direct.clone();
        same[3] = None;
        let twin: Vec<Option<f64>> = same
            .iter()
            .enumerate()
            .map(|(i, v)| v.map(|v| v + if i % 2 == 0 { 3.0 } else { -3.0 }))
            .collect();
        let names = [Role::Direct, Role::Twin];
        let d = deltas(&names, &[calls(direct), calls(twin)], false, 2_000, 0.95, 1);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].pairs, 99);
        assert!(!d[0].distinguishable, "{:?}", d[0]);
        assert_eq!(d[0].verdict(), "not distinguishable from direct");
    }
}
