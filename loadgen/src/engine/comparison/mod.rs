//! What every comparison (`compare`, each level of `sweep`, `capacity`, `ladder`, `profile`) is
//! made of besides its load: the named targets from the options, the twin, the trials, the
//! settle between them and the resources to sample; running its trials (`trials`), analysing
//! them (`analysis`) and judging the result (`judged`).

pub(crate) mod analysis;
mod judged;
mod trials;

pub(crate) use analysis::{analyse, figures_of};
pub(crate) use judged::{invalid_reasons, Ran};
pub(crate) use trials::{pause, run_trials, run_trials_watched};

use std::time::Duration;

use crate::engine::gateways::{
    min_effect_us, named_gateways, named_targets, with_twin, Disclosed, Named,
};
use crate::engine::run::SetupError;
use crate::engine::sampler::{sample_specs, SampleSpec};
use crate::generator::plan::PlanError;
use crate::options::CompareArgs;

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
        let mut targets = args.targets(mode)?;
        let twin = match args.twin.as_deref() {
            None if !twin_by_default => false,
            twin => with_twin(
                &mut targets,
                twin,
                args.direct.as_deref(),
                &args.run.transport()?.connect_to,
            )?,
        };
        Ok(Comparison {
            targets,
            twin,
            min_effect_us: min_effect_us(args.min_effect.as_deref())?,
            trials: args.trials(default_trials)?,
            settle: args.settle(Duration::ZERO)?,
            samples: sample_specs(&args.sample)?,
        })
    }
}

impl CompareArgs {
    /// The direct target and the gateways; `--target` is refused, since `mode` takes
    /// `--direct` and `--gateway` instead.
    pub(crate) fn targets(&self, mode: &str) -> Result<Vec<Named>, SetupError> {
        let pins = self.pins(mode)?;
        Ok(named_targets(
            self.direct.as_deref(),
            &self.gateways,
            self.disclosed(),
            &pins,
        )?)
    }

    /// The gateways alone (no direct target), for a mode where `--direct` is optional.
    pub(crate) fn gateway_targets(&self, mode: &str) -> Result<Vec<Named>, SetupError> {
        let pins = self.pins(mode)?;
        Ok(named_gateways(&self.gateways, self.disclosed(), &pins)?)
    }

    fn disclosed(&self) -> Disclosed<'_> {
        Disclosed {
            infos: &self.gateway_info,
            recordings: &self.gateway_recording,
        }
    }

    /// The `--connect-to` rules, after refusing `--target`.
    fn pins(&self, mode: &str) -> Result<Vec<crate::wire::transport::Pin>, SetupError> {
        if !self.run.targets.is_empty() {
            return Err(SetupError::Other(format!(
                "{mode} takes --direct URL and --gateway NAME=URL, not --target"
            )));
        }
        Ok(self.run.transport()?.connect_to)
    }

    /// `--settle`, or `default`.
    pub(crate) fn settle(&self, default: Duration) -> Result<Duration, SetupError> {
        match self.settle.as_deref() {
            None => Ok(default),
            Some(text) => gatebench_shared::latency::parse_duration_us(text)
                .map(Duration::from_micros)
                .filter(|d| *d <= Duration::from_secs(3_600))
                .ok_or_else(|| PlanError::Duration("--settle", text.into(), ", at most 1h").into()),
        }
    }

    /// `--trials`, or `default`.
    pub(crate) fn trials(&self, default: usize) -> Result<usize, SetupError> {
        match self.trials.unwrap_or(default) {
            n @ 1..=1_000 => Ok(n),
            n => Err(PlanError::Count("--trials", n, 1_000).into()),
        }
    }
}
