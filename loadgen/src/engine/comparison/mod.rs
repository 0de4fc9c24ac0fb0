//! What every comparison (`compare`, each level of `sweep`, `capacity`, `ladder`, `profile`) is
//! made of besides its load: the named targets from the options, the twin, the trials, the
//! settle between them and the resources to sample; running its trials (`trials`), analysing
//! them (`analysis`) and judging the result (`judged`).

pub(crate) mod analysis;
mod judged;
mod trials;

pub(crate) use analysis::{analyse, analyse_with_turns, figures_of};
pub(crate) use judged::{invalid_reasons, Ran};
#[cfg(test)]
pub(crate) use trials::run_trials_on;
pub(crate) use trials::{pause, run_trials, run_trials_watched};

use std::time::Duration;

use gatebench_shared::duration::format_us;

use crate::engine::gateways::{min_effect_us, named_gateways, named_targets, with_twin, Disclosed};
use crate::engine::run::SetupError;
use crate::engine::sampler::{sample_specs, SampleSpec};
use crate::generator::plan::Plan;
use crate::generator::plan_error::PlanError;
use crate::model::target::Named;
use crate::options::preset::{PLACEHOLDER, PLACEHOLDER_GATEWAY};
use crate::options::{CompareArgs, GatewayFlags, JudgeFlags, LoadArgs, SettleFlag};
use crate::wire::connect_to::ConnectTo;

/// The targets, the twin, the trials and the resources of a comparison.
#[derive(Debug)]
pub struct Comparison {
    /// Direct first, then the twin (when there is one), then the gateways.
    pub targets: Vec<Named>,
    pub twin: bool,
    pub min_effect_us: f64,
    pub trials: usize,
    pub settle: Duration,
    pub samples: Vec<SampleSpec>,
}

impl Comparison {
    /// Checks the options of `mode` (`compare` or `sweep`). The twin is the direct URL again
    /// unless `twin_by_default` is false (a sweep runs one only when `--twin URL` names it).
    pub fn new(
        args: &CompareArgs,
        mode: &str,
        twin_by_default: bool,
        default_trials: usize,
    ) -> Result<Comparison, SetupError> {
        let mut targets = named(&args.targets, &args.load, mode)?;
        let twin = match args.judge.twin.as_deref() {
            None if !twin_by_default => false,
            twin => with_twin(
                &mut targets,
                twin,
                args.targets.direct.as_deref(),
                &args.load.transport()?.connect_to,
            )?,
        };
        Ok(Comparison {
            targets,
            twin,
            min_effect_us: min_effect_us(args.judge.min_effect.as_deref())?,
            trials: trials(args.judge.trials, default_trials)?,
            settle: settle(args.pause.settle.as_deref(), Duration::ZERO)?,
            samples: sample_specs(&args.targets.sample)?,
        })
    }
    /// The header of this comparison's result, `plan` its load and `mock` the direct mock's
    /// configuration; `no_twin` says how verdicts are judged when no twin ran.
    pub(crate) fn header(
        self,
        plan: &Plan,
        mock: Option<String>,
        no_twin: &str,
    ) -> crate::results::comparison::ComparisonHeader {
        crate::results::comparison::ComparisonHeader {
            resolution_source: crate::model::target::resolution_source(
                &self.targets,
                self.twin,
                no_twin,
            ),
            plan: plan.into(),
            targets: self.targets,
            twin: self.twin,
            min_effect_us: self.min_effect_us,
            mock,
            trials: self.trials,
            settle_us: self.settle.as_micros() as u64,
        }
    }
}

/// The direct target and the gateways; `--target` is refused, since `mode` takes `--direct`
/// and `--gateway` instead.
pub(crate) fn named(
    flags: &GatewayFlags,
    run: &LoadArgs,
    mode: &str,
) -> Result<Vec<Named>, SetupError> {
    let rules = connect_to_rules(run, mode)?;
    Ok(named_targets(
        flags.direct.as_deref(),
        &flags.gateways,
        disclosed(flags),
        &rules,
    )?)
}

/// The gateways alone (no direct target), for a mode where `--direct` is optional.
pub(crate) fn gateways_only(
    flags: &GatewayFlags,
    run: &LoadArgs,
    mode: &str,
) -> Result<Vec<Named>, SetupError> {
    let rules = connect_to_rules(run, mode)?;
    Ok(named_gateways(&flags.gateways, disclosed(flags), &rules)?)
}

/// What the flags disclose about each gateway.
pub(crate) fn disclosed(flags: &GatewayFlags) -> Disclosed<'_> {
    Disclosed {
        infos: &flags.gateway_info,
        recordings: &flags.gateway_recording,
    }
}

/// The `--connect-to` rules, after refusing `--target`.
fn connect_to_rules(run: &LoadArgs, mode: &str) -> Result<Vec<ConnectTo>, SetupError> {
    if !run.targets.is_empty() {
        return Err(SetupError::Other(format!(
            "{mode} takes --direct URL and --gateway NAME=URL, not --target"
        )));
    }
    Ok(run.transport()?.connect_to)
}

/// `--settle`, or `default`.
pub(crate) fn settle(text: Option<&str>, default: Duration) -> Result<Duration, SetupError> {
    match text {
        None => Ok(default),
        Some(text) => gatebench_shared::duration::parse_us(text)
            .map(Duration::from_micros)
            .filter(|d| *d <= Duration::from_secs(3_600))
            .ok_or_else(|| PlanError::Duration("--settle", text.into(), ", at most 1h").into()),
    }
}

/// `--trials`, or `default`.
pub(crate) fn trials(given: Option<usize>, default: usize) -> Result<usize, SetupError> {
    match given.unwrap_or(default) {
        n @ 1..=1_000 => Ok(n),
        n => Err(PlanError::Count("--trials", n, 1_000).into()),
    }
}

/// `args` with what the comparison resolved: the load's options, the trials and the settle
/// (what `--print-config` prints).
pub(crate) fn resolved(args: &CompareArgs, plan: &Plan, comparison: &Comparison) -> CompareArgs {
    CompareArgs {
        targets: args.targets.clone(),
        judge: JudgeFlags {
            trials: Some(comparison.trials),
            ..args.judge.clone()
        },
        pause: SettleFlag {
            settle: Some(format_us(comparison.settle.as_micros() as u64)),
        },
        load: args.load.resolved(plan),
    }
}

/// Stand-in targets where a preset leaves them to the command line (`check-preset`; nothing
/// is sent to them).
pub(crate) fn stand_in_targets(flags: &mut GatewayFlags) {
    if flags.direct.is_none() {
        flags.direct = Some(PLACEHOLDER.into());
    }
    if flags.gateways.is_empty() {
        flags.gateways = vec![PLACEHOLDER_GATEWAY.into()];
    }
}
