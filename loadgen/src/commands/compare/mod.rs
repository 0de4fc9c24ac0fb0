//! `loadgen compare`: the same constant-rate load direct and through each gateway, in
//! alternating trials (direct, gateways, direct, gateways, …), with each percentile's added
//! latency and an interval across trials.
//!
//! - `analysis`: per-trial paired differences, t intervals, the summary and delta tables.

pub mod analysis;

use std::sync::Arc;
use std::time::Duration;

use gatebench_shared::host::raise_open_file_limit;

use crate::engine::gateways::{min_effect_us, reach, with_twin, Named};
use crate::engine::run::{
    run_target_watched, stop_flag, stop_requested, SetupError, Window, EXIT_FAILED, EXIT_OK,
};
use crate::engine::sampler::{ResourceReport, SampleSpec, Sampling};
use crate::generator::plan::Plan;
use crate::options::CompareArgs;
use crate::options::COMPARE_TRIALS as DEFAULT_TRIALS;
use crate::results::role::Role;
use crate::results::run::TargetRun;

use crate::engine::sampler::sample_specs;
use crate::results::compare::{CompareResult, TrialRun, SCHEMA};
use crate::results::compare::{PercentileDelta, TargetSummary, TrialFigures};
use analysis::{deltas, summarise};

/// What every comparison (`compare`, each level of `sweep`) is made of besides its load: the
/// targets, the twin, the trials and the resources to sample.
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

/// A validated `loadgen compare`, made once from its options (flags over the profile): what it
/// runs, and what `--print-config` prints.
#[derive(Debug)]
pub struct ComparePlan {
    /// The options as merged.
    pub args: CompareArgs,
    pub comparison: Comparison,
    /// Each trial's load.
    pub plan: Plan,
}

impl ComparePlan {
    /// Checks `args` (with its profile under it) without sending anything.
    pub fn new(args: CompareArgs) -> anyhow::Result<ComparePlan> {
        let args = crate::options::profile::compare(args)?;
        let comparison = Comparison::new(&args, "compare", true, DEFAULT_TRIALS)?;
        let plan = args.run.clone().plan().map_err(SetupError::from)?;
        if plan.duration.is_none() {
            return Err(SetupError::Other(
                "compare needs a finite --duration for each trial".into(),
            )
            .into());
        }
        Ok(ComparePlan {
            args,
            comparison,
            plan,
        })
    }
}

/// Runs `loadgen compare` and returns the result with the exit code it earns.
pub fn run_compare(args: CompareArgs, command: Vec<String>) -> anyhow::Result<(CompareResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let ComparePlan {
        comparison, plan, ..
    } = ComparePlan::new(args)?;
    let c = &comparison;
    let mock = reach(&c.targets, plan.timeout)?;
    let open_files = raise_open_file_limit().ok();
    crate::engine::run::check_open_files(&plan, open_files.as_ref())?;
    let stop = stop_flag();
    let sampling = Sampling::start(c.samples.clone());
    let runs = run_trials(&plan, &c.targets, c.trials, c.settle, "");
    let resources = sampling.finish();
    let interrupted = stop.stop.load(std::sync::atomic::Ordering::Relaxed);
    let (summary, deltas) = analyse(&c.targets, &runs, c.twin, c.min_effect_us);
    let envelope = crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files);
    let ran = Ran {
        runs,
        summary,
        deltas,
        resources,
        interrupted,
    };
    let result = CompareResult::judged(envelope, plan, comparison, mock, ran);
    let code = if result.valid { EXIT_OK } else { EXIT_FAILED };
    Ok((result, code))
}

/// What a comparison's trials gave, before it is judged.
#[derive(Debug)]
pub(crate) struct Ran {
    pub runs: Vec<TrialRun>,
    pub summary: Vec<TargetSummary>,
    pub deltas: Vec<PercentileDelta>,
    pub resources: Vec<ResourceReport>,
    pub interrupted: bool,
}

impl CompareResult {
    /// The result of `comparison`'s trials: invalid when any trial was, or when it was stopped
    /// before every trial ran.
    pub(crate) fn judged(
        envelope: crate::results::envelope::Envelope,
        plan: Plan,
        comparison: Comparison,
        mock: Option<String>,
        ran: Ran,
    ) -> CompareResult {
        let mut invalid_reasons = invalid_reasons(&ran.runs, "");
        if ran.interrupted {
            invalid_reasons.push("interrupted before every trial ran".into());
        }
        CompareResult {
            envelope,
            plan: (&plan).into(),
            targets: comparison.targets,
            twin: comparison.twin,
            min_effect_us: comparison.min_effect_us,
            mock,
            trials: comparison.trials,
            settle_us: comparison.settle.as_micros() as u64,
            runs: ran.runs,
            summary: ran.summary,
            deltas: ran.deltas,
            resources: ran.resources,
            valid: invalid_reasons.is_empty(),
            invalid_reasons,
            interrupted: ran.interrupted,
        }
    }
}

/// Why each trial of `runs` that is invalid is, `prefix` before the target's name.
pub(crate) fn invalid_reasons(runs: &[TrialRun], prefix: &str) -> Vec<String> {
    runs.iter()
        .filter(|r| !r.run.validity.valid)
        .map(|r| {
            format!(
                "{prefix}{} trial {}: {}",
                r.name,
                r.trial,
                r.run.validity.reasons.join("; ")
            )
        })
        .collect()
}

/// Runs `trials` alternating trials of `plan`'s load on every target (direct first), until
/// Ctrl-C; `label` prefixes the progress lines.
pub(crate) fn run_trials(
    plan: &Plan,
    targets: &[Named],
    trials: usize,
    settle: Duration,
    label: &str,
) -> Vec<TrialRun> {
    run_trials_watched(plan, targets, trials, settle, label, &mut |_, _| {})
}

/// [`run_trials`], telling `watch` when each run's measured window opens and closes, and for
/// which target.
pub(crate) fn run_trials_watched(
    plan: &Plan,
    targets: &[Named],
    trials: usize,
    settle: Duration,
    label: &str,
    watch: &mut dyn FnMut(&Named, Window),
) -> Vec<TrialRun> {
    let shared = Arc::new(plan.clone());
    let mut runs = Vec::new();
    'trials: for trial in 0..trials {
        for t in targets {
            if !runs.is_empty() {
                pause(settle);
            }
            if stop_requested() {
                break 'trials;
            }
            if !plan.quiet {
                gatebench_shared::say!("loadgen: {label}trial {}/{trials}, {}", trial + 1, t.name);
            }
            let run = run_target_watched(shared.clone(), t.target.clone(), &mut |w| watch(t, w));
            runs.push(TrialRun {
                trial: trial + 1,
                name: t.name.clone(),
                run,
            });
        }
    }
    runs
}

/// Sleeps for `settle`, waking early when the run is stopped.
pub(crate) fn pause(settle: Duration) {
    let until = std::time::Instant::now() + settle;
    while !stop_requested() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
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
    analysis::judge(&mut deltas, twin, min_effect_us);
    (summary, deltas)
}

pub(crate) fn figures_of(run: &TargetRun) -> TrialFigures {
    let rt = run.metrics.get("response_time");
    let p = |f: fn(&crate::results::run::Summary) -> u64| rt.map_or(f64::NAN, |s| f(s) as f64);
    TrialFigures {
        requests: run.requests,
        ok: run.ok,
        throughput: run.throughput,
        percentiles_us: [p(|s| s.p50), p(|s| s.p90), p(|s| s.p99), p(|s| s.p999)],
    }
}
