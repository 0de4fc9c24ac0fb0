//! From alternating rate trials to "at p99 the gateway adds X µs (95% interval across trials)".
//!
//! Trial k of the direct target and trial k of a gateway ran one after the other under the same
//! load; the per-trial difference of a percentile is their paired difference, and the interval is
//! Student's t over the trials' differences. The twin (`--twin`, by default the direct URL run
//! again as a target of its own) is the A/A control: a gateway is tested against the twin at the
//! same percentile (Welch's t over trials), and its interval must lie beyond the twin's (the
//! resolution, at least `--min-effect`) to be called different. Without a twin, it is tested
//! against ±`--min-effect`. The tests of every gateway and percentile are Holm-adjusted
//! together, so a verdict's 5% error rate holds for the whole table, as in `overhead`.

use gatebench_shared::stats::median;
use gatebench_shared::trials::{holm, AcrossTrials};

use crate::engine::judge::{judge as judged, p_value, resolution_of};
use crate::model::role::Role;
use crate::model::target::Named;
use crate::results::compare::TrialRun;
use crate::results::compare::{PercentileDelta, TargetSummary, TrialFigures, PERCENTILES};
use crate::results::run::TargetRun;

impl PercentileDelta {
    /// The verdict (computed for results written before verdicts were stored).
    pub fn verdict(&self) -> String {
        if !self.verdict.is_empty() {
            return self.verdict.clone();
        }
        match self.added_us {
            Some(added) => judged(
                self.p_adjusted.unwrap_or(1.0),
                added,
                self.resolution_us,
                self.per_trial_us.len(),
                self.control,
            ),
            None => "one trial: no interval".into(),
        }
    }

    /// The row of `gateway` at `percentile` from its per-trial differences, not yet judged.
    fn unjudged(gateway: &Role, percentile: String, per_trial_us: Vec<f64>) -> PercentileDelta {
        PercentileDelta {
            gateway: gateway.clone(),
            percentile,
            // The same interval the twin's resolution is read from.
            added_us: AcrossTrials::of_estimates(&per_trial_us).map(|a| a.interval(0.95)),
            per_trial_us,
            p_adjusted: None,
            resolution_us: 0.0,
            control: false,
            verdict: String::new(),
        }
    }

    fn across(&self) -> Option<AcrossTrials> {
        AcrossTrials::of_estimates(&self.per_trial_us)
    }
}

/// Judges every delta: each gateway's percentile against the twin's at the same percentile
/// (`twin`: the twin's rows are in `deltas`), or against ±`min_effect_us`; Holm over every
/// row but the twin's.
pub fn judge(deltas: &mut [PercentileDelta], twin: bool, min_effect_us: f64) {
    let control = |percentile: &str| -> Option<AcrossTrials> {
        deltas
            .iter()
            .find(|d| twin && d.gateway.is_twin() && d.percentile == percentile)?
            .across()
    };
    let mut tested: Vec<(usize, f64)> = Vec::new();
    let mut resolutions = Vec::new();
    for (i, d) in deltas.iter().enumerate() {
        let twin_row = control(&d.percentile);
        resolutions.push(resolution_of(twin_row.as_ref(), min_effect_us));
        if twin && d.gateway.is_twin() {
            continue;
        }
        let Some(figure) = d.across() else { continue };
        tested.push((i, p_value(&figure, twin_row.as_ref(), min_effect_us)));
    }
    let adjusted = holm(&tested.iter().map(|(_, p)| *p).collect::<Vec<_>>());
    for ((i, _), p) in tested.iter().zip(adjusted) {
        deltas[*i].p_adjusted = Some(p);
    }
    for (d, resolution) in deltas.iter_mut().zip(resolutions) {
        d.resolution_us = resolution;
        d.control = twin && d.gateway.is_twin();
        d.verdict = String::new();
        d.verdict = d.verdict();
    }
}

/// Summaries per target, from each target's trials.
pub fn summarise(name: &Role, trials: &[TrialFigures]) -> TargetSummary {
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
        name: name.clone(),
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
    gateway: &Role,
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
            PercentileDelta::unjudged(gateway, name.to_string(), per_trial)
        })
        .collect()
}

/// The summary row of every target and the deltas of every gateway (and of the twin, when
/// `twin`: the second target) against direct, judged.
pub(crate) fn analyse(
    targets: &[Named],
    runs: &[TrialRun],
    twin: bool,
    min_effect_us: f64,
) -> (Vec<TargetSummary>, Vec<PercentileDelta>) {
    let figures = |name: &Role| -> Vec<TrialFigures> {
        runs.iter()
            .filter(|r| r.name == *name)
            .map(|r| figures_of(&r.run))
            .collect()
    };
    let summary = targets
        .iter()
        .map(|t| summarise(&t.name, &figures(&t.name)))
        .collect();
    let direct = figures(&Role::Direct);
    let mut deltas: Vec<PercentileDelta> = targets[1..]
        .iter()
        .flat_map(|t| deltas(&t.name, &direct, &figures(&t.name)))
        .collect();
    judge(&mut deltas, twin, min_effect_us);
    (summary, deltas)
}

/// [`analyse`], and when the runs sent sessions, what each gateway (and the twin) adds to each
/// turn number's median TTFT and response time, judged in one family with the percentiles.
pub(crate) fn analyse_with_turns(
    targets: &[Named],
    runs: &[TrialRun],
    twin: bool,
    min_effect_us: f64,
) -> (
    Vec<TargetSummary>,
    Vec<PercentileDelta>,
    Vec<PercentileDelta>,
) {
    let (summary, mut deltas) = analyse(targets, runs, twin, min_effect_us);
    let turns: Vec<PercentileDelta> = targets[1..]
        .iter()
        .flat_map(|t| turn_deltas(&t.name, runs))
        .collect();
    if turns.is_empty() {
        return (summary, deltas, turns);
    }
    let split = deltas.len();
    deltas.extend(turns);
    judge(&mut deltas, twin, min_effect_us);
    let turns = deltas.split_off(split);
    (summary, deltas, turns)
}

/// A figure of a turn row.
type TurnFigure = fn(&crate::results::sessions::TurnRow) -> Option<u64>;

/// The metrics compared per turn: (name in results, the figure of a turn row).
const TURN_FIGURES: [(&str, TurnFigure); 2] = [
    ("ttft_p50", |t| t.all.ttft.map(|s| s.p50)),
    ("response_time_p50", |t| Some(t.all.response_time.p50)),
];

/// `gateway`'s per-turn deltas against direct, trial by trial, for every turn number both
/// answered in every trial (a row named like `turn 3 ttft_p50`).
fn turn_deltas(gateway: &Role, runs: &[TrialRun]) -> Vec<PercentileDelta> {
    let tables = |name: &Role| -> Vec<&crate::results::sessions::SessionsResult> {
        runs.iter()
            .filter(|r| r.name == *name)
            .filter_map(|r| r.run.sessions.as_ref())
            .collect()
    };
    let (direct, theirs) = (tables(&Role::Direct), tables(gateway));
    let most = direct.iter().map(|s| s.turns.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for turn in 1..=most as u64 {
        for (metric, figure) in TURN_FIGURES {
            let at = |s: &crate::results::sessions::SessionsResult| {
                s.turns.iter().find(|t| t.turn == turn).and_then(figure)
            };
            let per_trial: Option<Vec<f64>> = direct
                .iter()
                .zip(&theirs)
                .map(|(d, g)| Some(at(g)? as f64 - at(d)? as f64))
                .collect();
            let Some(per_trial) = per_trial.filter(|v| !v.is_empty()) else {
                continue;
            };
            out.push(PercentileDelta::unjudged(
                gateway,
                format!("turn {turn} {metric}"),
                per_trial,
            ));
        }
    }
    out
}

/// The figures of one run that a comparison analyses.
pub(crate) fn figures_of(run: &TargetRun) -> TrialFigures {
    let rt = run.metrics.get("response_time");
    let p = |f: fn(&crate::results::metric::Summary) -> u64| rt.map_or(f64::NAN, |s| f(s) as f64);
    TrialFigures {
        requests: run.requests,
        ok: run.ok,
        throughput: run.throughput,
        percentiles_us: [p(|s| s.p50), p(|s| s.p90), p(|s| s.p99), p(|s| s.p999)],
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;

    /// Three trials of direct, twin and a gateway that truly adds `effect` at every percentile;
    /// every target's percentiles move by their own trial-level shift (uniform in ±`shift`).
    fn simulate(rng: &mut Pcg64Mcg, effect: f64, shift: f64) -> Vec<PercentileDelta> {
        let mut trial = |base: f64| {
            let mut draw = || base + rng.random_range(-shift..=shift);
            figures([
                100.0 + draw(),
                200.0 + draw(),
                400.0 + draw(),
                800.0 + draw(),
            ])
        };
        let direct: Vec<TrialFigures> = (0..3).map(|_| trial(0.0)).collect();
        let twin: Vec<TrialFigures> = (0..3).map(|_| trial(0.0)).collect();
        let gateway: Vec<TrialFigures> = (0..3).map(|_| trial(effect)).collect();
        let mut d = deltas(&Role::Twin, &direct, &twin);
        d.extend(deltas(&"gw".into(), &direct, &gateway));
        judge(&mut d, true, 0.0);
        d
    }

    #[test]
    fn trial_level_shifts_without_an_effect_are_not_called_a_difference() {
        let mut rng = Pcg64Mcg::seed_from_u64(17);
        let called = (0..200)
            .filter(|_| {
                simulate(&mut rng, 0.0, 5.0)
                    .iter()
                    .filter(|d| d.gateway.as_str() == "gw")
                    .any(|d| d.verdict == "adds latency" || d.verdict == "faster than direct")
            })
            .count();
        // Holm over the four percentiles: at most 5% of tables call any row different.
        assert!(called <= 10, "{called} of 200 tables called a difference");
    }

    #[test]
    fn a_true_effect_of_50_us_is_found() {
        let mut rng = Pcg64Mcg::seed_from_u64(18);
        let found = (0..200)
            .filter(|_| {
                let d = simulate(&mut rng, 50.0, 5.0);
                let p50 = d
                    .iter()
                    .find(|d| d.gateway.as_str() == "gw" && d.percentile == "p50");
                p50.unwrap().verdict == "adds latency"
            })
            .count();
        assert!(found >= 190, "{found} of 200 found");
    }

    #[test]
    fn without_a_twin_the_floor_is_min_effect() {
        let direct = [figures([100.0; 4]), figures([101.0; 4]), figures([99.0; 4])];
        let gateway = [
            figures([110.0; 4]),
            figures([111.0; 4]),
            figures([110.0; 4]),
        ];
        let mut d = deltas(&"gw".into(), &direct, &gateway);
        judge(&mut d, false, 20.0);
        assert_eq!(d[0].resolution_us, 20.0);
        assert_eq!(d[0].verdict, "within the resolution (±20 µs)");
        judge(&mut d, false, 0.0);
        assert_eq!(d[0].verdict, "adds latency");
    }

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
        let mut d = deltas(&"gw".into(), &direct, &gateway);
        judge(&mut d, false, 0.0);
        assert_eq!(d[0].per_trial_us, [50.0, 50.0, 50.0]);
        let p50 = d[0].added_us.unwrap();
        assert_eq!((p50.estimate, p50.low, p50.high), (50.0, 50.0, 50.0));
        assert_eq!(d[0].verdict(), "adds latency");
        // p99: +20, −20, +20 → mean 6.7, an interval around zero.
        assert_eq!(d[2].verdict(), "not distinguishable from direct");
        let s = summarise(&"gw".into(), &gateway);
        assert_eq!((s.requests, s.ok, s.trials), (300, 297, 3));
        assert_eq!(s.p50_us, 160.0);
        assert!(deltas(&"gw".into(), &direct[..1], &gateway[..1])[0]
            .added_us
            .is_none());
    }
}
