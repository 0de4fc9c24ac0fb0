//! One verdict per gateway, scenario and metric, across trials and against the twin.
//!
//! - The figure is the mean of the trials' median differences, with a 95% t interval over the
//!   trials (`gatebench_shared::trials`): it carries the variation between trials, which a
//!   trial's own bootstrap interval does not.
//! - A gateway is compared with the twin (the A/A control in the same rounds), not with zero:
//!   Welch's t test of the two means across trials. Without a twin, with zero widened by
//!   `--min-effect`.
//! - The p-values of every gateway, scenario and metric are adjusted together (Holm), so the 5%
//!   error rate holds for the whole table, not for each row.
//! - "adds latency" or "faster than direct" needs the adjusted test at 5% and the interval
//!   beyond the resolution on that side; anything else is "within the resolution (±R µs)", R
//!   being the farthest end of the twin's interval from zero (or `--min-effect`, whichever is
//!   larger). Two processes of one binary differ by a µs or so, consistently enough for ten
//!   trials to find it; that is the setup's resolution, not a gateway's cost.

use gatebench_shared::stats::Interval;
use gatebench_shared::trials::{holm, AcrossTrials};

use super::plan::OverheadPlan;
use crate::engine::judge::ALPHA;
use crate::engine::judge::{judge, p_value, resolution_of};
use crate::model::role::Role;
use crate::results::overhead::{scenarios, Trial};
use crate::results::overhead::{Between, Combined};

/// The combined verdicts of every target after direct (the twin's row is the control).
pub fn combine(plan: &OverheadPlan, trials: &[Trial]) -> Vec<Combined> {
    let mut rows = Vec::new();
    for scenario in scenarios(trials) {
        let of = |gateway: &Role, metric: &str| figure(trials, scenario, gateway, metric);
        for metric in metrics_of(trials, scenario) {
            let control = plan.twin.then(|| of(&Role::Twin, metric)).flatten();
            let resolution = resolution_of(control.as_ref(), plan.min_effect_us);
            for target in plan.targets.iter().skip(1) {
                let Some(figure) = of(&target.name, metric) else {
                    continue;
                };
                let is_twin = plan.twin && target.name.is_twin();
                let p_value = if is_twin {
                    1.0
                } else {
                    p_value(&figure, control.as_ref(), plan.min_effect_us)
                };
                rows.push(Combined {
                    gateway: target.name.clone(),
                    scenario: scenario.to_string(),
                    metric: metric.to_string(),
                    trials: figure.trials,
                    added_us: figure.interval(0.95),
                    resolution_us: resolution,
                    p_value,
                    p_adjusted: 1.0,
                    verdict: String::new(),
                });
            }
        }
    }
    let judged: Vec<usize> = (0..rows.len())
        .filter(|&i| !(plan.twin && rows[i].gateway.is_twin()))
        .collect();
    let adjusted = holm(&judged.iter().map(|&i| rows[i].p_value).collect::<Vec<_>>());
    for (&i, p) in judged.iter().zip(adjusted) {
        rows[i].p_adjusted = p;
    }
    for row in &mut rows {
        row.verdict = verdict(row, plan.twin && row.gateway.is_twin());
    }
    rows
}

/// One target's figure across the trials of one scenario and metric.
fn figure(trials: &[Trial], scenario: &str, gateway: &Role, metric: &str) -> Option<AcrossTrials> {
    let per_trial: Vec<Interval> = trials
        .iter()
        .filter(|t| t.scenario == scenario)
        .flat_map(|t| &t.deltas)
        .filter(|d| d.gateway == *gateway && d.metric == metric)
        .map(|d| d.added_us)
        .collect();
    AcrossTrials::of(&per_trial)
}

/// The metrics of a scenario, in the order the trials give them.
fn metrics_of<'a>(trials: &'a [Trial], scenario: &str) -> Vec<&'a str> {
    let mut metrics: Vec<&str> = Vec::new();
    for d in trials
        .iter()
        .filter(|t| t.scenario == scenario)
        .flat_map(|t| &t.deltas)
    {
        if !metrics.contains(&d.metric.as_str()) {
            metrics.push(&d.metric);
        }
    }
    metrics
}

/// Every pair of gateways (the twin left out) against each other: "slower", "faster", or not
/// told apart, Holm-adjusted over the pairs as their own family.
pub fn between(plan: &OverheadPlan, trials: &[Trial]) -> Vec<Between> {
    let gateways: Vec<&Role> = plan
        .targets
        .iter()
        .skip(1)
        .map(|t| &t.name)
        .filter(|name| !(plan.twin && name.is_twin()))
        .collect();
    let mut rows = Vec::new();
    for scenario in scenarios(trials) {
        for metric in metrics_of(trials, scenario) {
            for (i, first) in gateways.iter().enumerate() {
                for second in &gateways[i + 1..] {
                    let (Some(a), Some(b)) = (
                        figure(trials, scenario, first, metric),
                        figure(trials, scenario, second, metric),
                    ) else {
                        continue;
                    };
                    let difference = a.minus(&b);
                    rows.push(Between {
                        first: first.to_string(),
                        second: second.to_string(),
                        scenario: scenario.to_string(),
                        metric: metric.to_string(),
                        difference_us: difference.interval(0.95),
                        p_value: difference.p_value_beyond(0.0),
                        p_adjusted: 1.0,
                        verdict: String::new(),
                    });
                }
            }
        }
    }
    let adjusted = holm(&rows.iter().map(|r| r.p_value).collect::<Vec<_>>());
    for (row, p) in rows.iter_mut().zip(adjusted) {
        row.p_adjusted = p;
        let d = row.difference_us;
        row.verdict = if p < ALPHA && d.low > 0.0 {
            format!("{} slower than {}", row.first, row.second)
        } else if p < ALPHA && d.high < 0.0 {
            format!("{} faster than {}", row.first, row.second)
        } else {
            "not told apart".to_string()
        };
    }
    rows
}

fn verdict(row: &Combined, is_twin: bool) -> String {
    judge(
        row.p_adjusted,
        row.added_us,
        row.resolution_us,
        row.trials,
        is_twin,
    )
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;
    use crate::results::overhead::Delta;

    fn plan(gateways: &[&str], twin: bool) -> OverheadPlan {
        let mut args = crate::options::OverheadArgs {
            targets: crate::options::GatewayFlags {
                direct: Some("http://127.0.0.1:9/v1/chat/completions".into()),
                gateways: gateways
                    .iter()
                    .map(|g| format!("{g}=http://127.0.0.1:10/v1/chat/completions"))
                    .collect(),
                ..Default::default()
            },
            ..Default::default()
        };
        if !twin {
            args.judge.twin = Some("none".into());
        }
        args.plan().unwrap()
    }

    fn delta(gateway: &str, added: f64, half_width: f64) -> Delta {
        Delta {
            gateway: gateway.into(),
            metric: "e2e".into(),
            pairs: 150,
            direct_median_us: 100.0,
            gateway_median_us: 100.0 + added,
            added_us: Interval {
                estimate: added,
                low: added - half_width,
                high: added + half_width,
                confidence: 0.95,
            },
            distinguishable: (added - half_width) > 0.0 || (added + half_width) < 0.0,
        }
    }

    /// Three trials where every target's figure moves by its own trial-level shift (uniform in
    /// ±`shift`), each trial's own interval ±1 µs (far narrower than the shifts, as on this
    /// machine); the gateway truly adds `effect`.
    fn simulate(rng: &mut Pcg64Mcg, effect: f64, shift: f64) -> Vec<Trial> {
        (1..=3)
            .map(|trial| {
                let mut draw = |base: f64| base + rng.random_range(-shift..=shift);
                Trial {
                    trial,
                    scenario: "chat".into(),
                    stream: false,
                    targets: Vec::new(),
                    deltas: vec![
                        delta(Role::TWIN, draw(0.0), 1.0),
                        delta("gw", draw(effect), 1.0),
                    ],
                }
            })
            .collect()
    }

    #[test]
    fn trial_level_shifts_without_an_effect_are_not_called_a_difference() {
        let plan = plan(&["gw"], true);
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let called = (0..200)
            .filter(|_| {
                let rows = combine(&plan, &simulate(&mut rng, 0.0, 5.0));
                let gw = rows.iter().find(|r| r.gateway.as_str() == "gw").unwrap();
                gw.verdict == "adds latency" || gw.verdict == "faster than direct"
            })
            .count();
        // Each per-trial interval alone calls most of these a difference.
        assert!(called <= 10, "{called} of 200 called different");
    }

    #[test]
    fn a_true_effect_of_50_us_is_found() {
        let plan = plan(&["gw"], true);
        let mut rng = Pcg64Mcg::seed_from_u64(8);
        let mut estimates = Vec::new();
        let found = (0..200)
            .filter(|_| {
                let rows = combine(&plan, &simulate(&mut rng, 50.0, 5.0));
                let gw = rows.iter().find(|r| r.gateway.as_str() == "gw").unwrap();
                estimates.push(gw.added_us.estimate);
                gw.verdict == "adds latency"
            })
            .count();
        assert!(found >= 190, "{found} of 200 found");
        let mean = estimates.iter().sum::<f64>() / estimates.len() as f64;
        assert!((mean - 50.0).abs() < 1.0, "{mean}");
    }

    #[test]
    fn the_twin_row_is_the_control_and_sets_the_resolution() {
        let plan = plan(&["gw"], true);
        let trials: Vec<Trial> = [(2.0, 30.0), (3.0, 31.0), (4.0, 29.0)]
            .iter()
            .enumerate()
            .map(|(i, &(twin, gw))| Trial {
                trial: i + 1,
                scenario: "chat".into(),
                stream: false,
                targets: Vec::new(),
                deltas: vec![delta(Role::TWIN, twin, 1.0), delta("gw", gw, 1.0)],
            })
            .collect();
        let rows = combine(&plan, &trials);
        assert_eq!(rows.len(), 2);
        let twin = &rows[0];
        // mean 3, se 0.577, t(0.975, 2) = 4.303: [0.52, 5.48]
        assert!((twin.resolution_us - 5.48).abs() < 0.05, "{twin:?}");
        assert!(twin.verdict.starts_with("control"), "{}", twin.verdict);
        assert_eq!(rows[1].verdict, "adds latency", "{:?}", rows[1]);
    }

    #[test]
    fn two_gateways_are_told_apart_only_when_they_differ() {
        let plan = plan(&["a", "b", "c"], true);
        let trials: Vec<Trial> = [(13.0, 14.2, 40.0), (14.0, 13.1, 41.0), (13.5, 13.9, 39.5)]
            .iter()
            .enumerate()
            .map(|(i, &(a, b, c))| Trial {
                trial: i + 1,
                scenario: "chat".into(),
                stream: false,
                targets: Vec::new(),
                deltas: vec![
                    delta(Role::TWIN, 0.0, 1.0),
                    delta("a", a, 1.0),
                    delta("b", b, 1.0),
                    delta("c", c, 1.0),
                ],
            })
            .collect();
        let rows = between(&plan, &trials);
        let verdicts: Vec<&str> = rows.iter().map(|r| r.verdict.as_str()).collect();
        assert_eq!(
            verdicts,
            ["not told apart", "a faster than c", "b faster than c"]
        );
    }

    #[test]
    fn without_a_twin_the_floor_is_min_effect() {
        let mut plan = plan(&["gw"], false);
        plan.min_effect_us = 10.0;
        let trials: Vec<Trial> = [8.0, 9.0, 8.5]
            .iter()
            .enumerate()
            .map(|(i, &gw)| Trial {
                trial: i + 1,
                scenario: "chat".into(),
                stream: false,
                targets: Vec::new(),
                deltas: vec![delta("gw", gw, 0.5)],
            })
            .collect();
        let rows = combine(&plan, &trials);
        assert_eq!(rows[0].verdict, "within the resolution (±10 µs)");
        plan.min_effect_us = 0.0;
        assert_eq!(combine(&plan, &trials)[0].verdict, "adds latency");
    }
}
