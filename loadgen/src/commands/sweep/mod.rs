//! `loadgen sweep`: the comparison of `loadgen compare` at a series of load levels (closed-loop
//! concurrency, or open-loop rates), with each level's direct baseline checked against the
//! single-client floor: a level whose direct p99 exceeds twice the floor is flagged "baseline
//! saturated" and kept out of the headline, since there the upstream, not the gateway, sets the
//! figures.

use gatebench_shared::host::raise_open_file_limit;

use super::command::{over_preset, table};
use super::{written, Command};
use crate::engine::comparison::{
    analyse, invalid_reasons, resolved, run_trials, stand_in_targets, Comparison,
};
use crate::engine::gateways::reach;
use crate::engine::run::{stop_flag, SetupError, EXIT_FAILED, EXIT_OK};
use crate::generator::plan::Plan;
use crate::generator::plan_error::PlanError;
use crate::generator::quantity::parse_rate;
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::model::target::Named;
use crate::options::{
    CompareArgs, LevelKind, SweepArgs, SWEEP_LEVELS as DEFAULT_LEVELS,
    SWEEP_TRIALS as DEFAULT_TRIALS,
};
use crate::results::compare::PercentileDelta;
use crate::results::comparison::ComparisonFooter;
use crate::results::sweep::{Headline, Level, SweepResult, SCHEMA};

/// A level's direct p99 over this many times the floor marks the baseline saturated.
const SATURATION: f64 = 2.0;

impl Level {
    /// The delta of `gateway` at `percentile` (`p50`, `p99`, ...), if that gateway was measured.
    pub fn delta(
        &self,
        gateway: &crate::model::role::Role,
        percentile: &str,
    ) -> Option<&PercentileDelta> {
        self.deltas
            .iter()
            .find(|d| d.gateway == *gateway && d.percentile == percentile)
    }
}

pub(crate) fn parse_levels(text: &str, kind: LevelKind) -> Result<Vec<f64>, PlanError> {
    const EXAMPLE: &str = "comma-separated levels like 1,4,16,64,256";
    match kind {
        LevelKind::Concurrency => {
            let counts = crate::generator::plan::parse_counts(text, EXAMPLE)?;
            Ok(counts.into_iter().map(|n| n as f64).collect())
        }
        LevelKind::Rate => text.split(',').map(|l| parse_rate(l.trim())).collect(),
    }
}

/// The plan of one level: the sweep's load options at that level (a concurrency level also
/// opens at least as many connections), checked as any plan is.
pub(crate) fn level_plan(
    base: &CompareArgs,
    kind: LevelKind,
    level: f64,
) -> Result<Plan, PlanError> {
    let mut run = base.load.clone();
    run.rate = None;
    run.concurrency = None;
    let load = match kind {
        LevelKind::Rate => Load::Open {
            rate: level,
            arrival: Arrival::Constant,
        },
        LevelKind::Concurrency => {
            run.connections = Some(run.connections.unwrap_or(0).max(level as usize));
            Load::Closed {
                concurrency: level as usize,
            }
        }
    };
    run.plan_at(Some(load))
}

/// A validated `loadgen sweep`, made once from its options (flags over the preset): what it
/// runs, and what `--print-config` prints.
#[derive(Debug)]
pub struct SweepPlan {
    /// The options as merged.
    pub compare: CompareArgs,
    pub kind: LevelKind,
    /// The levels as given (or the default), and parsed.
    pub levels_text: String,
    pub levels: Vec<f64>,
    /// The targets and trials of every level (a twin only with `--twin URL`: it would be one
    /// more target on every level).
    pub comparison: Comparison,
    /// Each level's load, in order.
    pub plans: Vec<Plan>,
}

impl SweepPlan {
    /// Checks `args` (with its preset under it) without sending anything: every level's plan
    /// is made before any load is sent.
    pub fn new(args: SweepArgs) -> anyhow::Result<SweepPlan> {
        let SweepArgs {
            levels,
            level_kind,
            compare,
        } = args.merged()?;
        let kind = level_kind.unwrap_or_default();
        let levels_text = levels.unwrap_or_else(|| DEFAULT_LEVELS.into());
        let levels = parse_levels(&levels_text, kind).map_err(SetupError::from)?;
        let comparison = Comparison::new(&compare, "sweep", false, DEFAULT_TRIALS)?;
        let plans = levels
            .iter()
            .map(|&l| level_plan(&compare, kind, l))
            .collect::<Result<Vec<Plan>, _>>()
            .map_err(SetupError::from)?;
        if plans
            .iter()
            .any(|p| p.duration.is_none() && p.requests.is_none())
        {
            return Err(SetupError::Other(
                "sweep needs a finite --duration per level (or --requests with concurrency levels)"
                    .into(),
            )
            .into());
        }
        Ok(SweepPlan {
            compare,
            kind,
            levels_text,
            levels,
            comparison,
            plans,
        })
    }
}

impl Command for SweepArgs {
    type Plan = SweepPlan;

    fn merged(self) -> anyhow::Result<SweepArgs> {
        let path = self.compare.load.preset.clone();
        over_preset(self, path.as_deref())
    }

    fn stand_ins(mut self) -> SweepArgs {
        stand_in_targets(&mut self.compare.targets);
        self
    }

    fn plan(self) -> anyhow::Result<SweepPlan> {
        SweepPlan::new(self)
    }

    fn execute(plan: SweepPlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = execute(plan, command_line)?;
        let report = crate::report::sweep::terminal(&result);
        written(&result, result.header.plan.out.as_deref(), &report, code)
    }

    fn preset(p: &SweepPlan) -> anyhow::Result<toml::Table> {
        let mut preset = table(&SweepArgs {
            levels: Some(p.levels_text.clone()),
            level_kind: Some(p.kind),
            compare: resolved(&p.compare, &p.plans[0], &p.comparison),
        });
        // Each level sets the load (and at least its own count of connections).
        preset.remove("rate");
        preset.remove("concurrency");
        if p.compare.load.connections.is_none() {
            preset.remove("connections");
        }
        Ok(preset)
    }

    fn describe(p: &SweepPlan) -> String {
        format!(
            "sweep: {} {} level(s), {} trial(s) each",
            p.levels.len(),
            p.kind,
            p.comparison.trials
        )
    }
}

/// Runs `loadgen sweep` and returns the result with the exit code it earns.
pub fn run_sweep(args: SweepArgs, command: Vec<String>) -> anyhow::Result<(SweepResult, u8)> {
    execute(SweepPlan::new(args)?, command)
}

/// Runs `plan` and returns the result with the exit code it earns.
fn execute(plan: SweepPlan, command: Vec<String>) -> anyhow::Result<(SweepResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let SweepPlan {
        compare,
        kind,
        levels,
        comparison: c,
        plans,
        ..
    } = plan;
    let mock = reach(&c.targets, plans[0].timeout)?;
    let open_files = raise_open_file_limit().ok();
    for plan in &plans {
        crate::engine::run::check_open_files(plan, open_files.as_ref())?;
    }
    let stop = stop_flag();
    let sampling = crate::engine::sampler::Sampling::start(c.samples.clone());
    let stopped = || stop.stop.load(std::sync::atomic::Ordering::Relaxed);

    // The single-client floor: the direct target with one request in flight, measured on its
    // own unless a level is that already.
    let floor_level = (kind == LevelKind::Concurrency)
        .then(|| levels.iter().position(|&l| l == 1.0))
        .flatten();
    let mut floor_p99_us = match floor_level {
        Some(_) => f64::NAN,
        None => floor_p99(&compare, &c)?,
    };
    let mut done = Vec::new();
    for (plan, &level) in plans.iter().zip(&levels) {
        if stopped() {
            break;
        }
        done.push(level_run(plan, level, kind, &c));
        if floor_level == Some(done.len() - 1) {
            floor_p99_us = done[done.len() - 1].direct_p99_us;
        }
    }
    let resources = sampling.finish();
    for level in &mut done {
        level.baseline_saturated = level.direct_p99_us > SATURATION * floor_p99_us;
    }
    let invalid = sweep_invalid_reasons(&done);
    let footer = ComparisonFooter::new(resources, invalid, stopped(), "level");
    let valid = footer.valid;
    let headline = headline(&c.targets, &done);
    let no_twin = "none (a sweep runs a twin only with --twin URL): verdicts against zero, \
                   widened by --min-effect";
    let result = SweepResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files),
        header: c.header(&plans[0], mock, no_twin),
        headline,
        exploratory: kind == LevelKind::Concurrency,
        level_kind: kind,
        floor_p99_us,
        levels: done,
        footer,
    };
    Ok((result, if valid { EXIT_OK } else { EXIT_FAILED }))
}

/// The direct target's p99 with one request in flight, one trial.
fn floor_p99(compare: &CompareArgs, c: &Comparison) -> anyhow::Result<f64> {
    let floor_plan = level_plan(compare, LevelKind::Concurrency, 1.0).map_err(SetupError::from)?;
    let runs = run_trials(&floor_plan, &c.targets[..1], 1, c.settle, "floor, ");
    let (summary, _) = analyse(&c.targets[..1], &runs, false, 0.0);
    Ok(summary.first().map_or(f64::NAN, |s| s.p99_us))
}

/// One level's trials of every target, summarised and judged (saturation is judged once the
/// floor is known).
fn level_run(plan: &Plan, level: f64, kind: LevelKind, c: &Comparison) -> Level {
    let label = format!("{kind} {level}, ");
    let runs = run_trials(plan, &c.targets, c.trials, c.settle, &label);
    let (summary, deltas) = analyse(&c.targets, &runs, c.twin, c.min_effect_us);
    let direct_p99_us = summary.first().map_or(f64::NAN, |s| s.p99_us);
    Level {
        level,
        summary,
        deltas,
        direct_p99_us,
        baseline_saturated: false,
        runs,
    }
}

/// Why the sweep's figures cannot be trusted: each level's invalid runs.
fn sweep_invalid_reasons(levels: &[Level]) -> Vec<String> {
    levels
        .iter()
        .flat_map(|l| invalid_reasons(&l.runs, &format!("level {} ", l.level)))
        .collect()
}

/// Each gateway's added p50 and p99 at the highest level whose baseline was not saturated.
fn headline(targets: &[Named], levels: &[Level]) -> Vec<Headline> {
    let Some(level) = levels.iter().rev().find(|l| !l.baseline_saturated) else {
        return Vec::new();
    };
    let added = |gateway: &crate::model::role::Role, percentile: &str| {
        level.delta(gateway, percentile).map_or(f64::NAN, |d| {
            d.added_us.map_or_else(
                || d.per_trial_us.first().copied().unwrap_or(f64::NAN),
                |i| i.estimate,
            )
        })
    };
    targets[1..]
        .iter()
        .map(|t| Headline {
            gateway: t.name.clone(),
            level: level.level,
            added_p50_us: added(&t.name, "p50"),
            added_p99_us: added(&t.name, "p99"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_kind() {
        assert_eq!(
            parse_levels("1, 4,16", LevelKind::Concurrency).unwrap(),
            [1.0, 4.0, 16.0]
        );
        assert_eq!(
            parse_levels("1k,2000", LevelKind::Rate).unwrap(),
            [1000.0, 2000.0]
        );
        assert!(parse_levels("0", LevelKind::Concurrency).is_err());
        assert!(parse_levels("x", LevelKind::Rate).is_err());
    }
}
