//! `loadgen overhead`: what a gateway adds to a call, measured in paired rounds.
//!
//! - `plan`: options (flags or a TOML preset) validated into one plan.
//! - `rounds`: one trial: every round calls direct and each gateway once, in a shuffled order.
//! - `analysis`: per-round differences → median with a bootstrap interval, per trial.
//! - `verdict`: the trials combined into one figure and verdict per gateway, scenario and
//!   metric, against the twin, Holm-adjusted.
//! - `command`: the command: its plan, its execution, its options printed as a preset.

pub mod analysis;
pub mod conversation_rounds;
pub mod plan;
pub mod rounds;
pub mod verdict;

mod command;

use super::Command;
pub use command::Overhead;

use std::sync::atomic::Ordering::Relaxed;

use gatebench_shared::host::raise_open_file_limit;

use crate::engine::run::{stop_flag, SetupError, EXIT_FAILED, EXIT_OK};

use crate::engine::paired::Call;
use crate::options::OverheadArgs;
use crate::results::overhead::Percentiles;
use crate::results::overhead::{OverheadResult, TargetTrial, Trial, SCHEMA};
use analysis::deltas;
use plan::OverheadPlan;
use rounds::TargetCalls;

/// Largest share of failed calls of any target for a valid result.
const MAX_FAILED: f64 = 0.01;

/// Runs `loadgen overhead` and returns the result with the exit code it earns.
pub fn run_overhead(
    args: OverheadArgs,
    command: Vec<String>,
) -> anyhow::Result<(OverheadResult, u8)> {
    execute(Command::plan(args.merged()?)?, command)
}

/// Runs `checked` and returns the result with the exit code it earns.
fn execute(checked: Overhead, command: Vec<String>) -> anyhow::Result<(OverheadResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let Overhead {
        args,
        mut plan,
        sessions,
    } = checked;
    let args_sample = args.targets.sample.clone();
    let open_files = raise_open_file_limit().ok();
    // The twin loadgen starts, if any, runs until this returns.
    let (mock, _twin) = crate::engine::twin::reach(&mut plan.targets, plan.timeout)?;
    let samples = crate::engine::sampler::sample_specs(&args_sample)?;
    if let Some(core) = plan.core {
        core_affinity::set_for_current(core_affinity::CoreId { id: core });
    }
    let stop = stop_flag();
    let sampling = crate::engine::sampler::Sampling::start(samples);
    let mut trials = Vec::new();
    'trials: for trial in 0..plan.trials {
        for request in &plan.requests {
            if stop.stop.load(Relaxed) {
                break 'trials;
            }
            if let Some(sessions) = &sessions {
                let turns =
                    conversation_rounds::run_trial(&plan, request, sessions, trial, &stop.stop)
                        .map_err(SetupError::Other)?;
                for (k, calls) in turns.into_iter().enumerate() {
                    let mut turn = request.clone();
                    turn.scenario = format!("{} turn {}", request.scenario, k + 1);
                    trials.push(summarise(&plan, trial, &turn, calls));
                }
                continue;
            }
            let calls =
                rounds::run_trial(&plan, request, trial, &stop.stop).map_err(SetupError::Other)?;
            trials.push(summarise(&plan, trial, request, calls));
        }
    }
    let resources = sampling.finish();
    let combined = verdict::combine(&plan, &trials);
    let between = verdict::between(&plan, &trials);
    let interrupted = stop.stop.load(Relaxed);
    let invalid_reasons = judge(&plan, &trials, interrupted);
    let valid = invalid_reasons.is_empty();
    let resolution_source = crate::model::target::resolution_source(
        &plan.targets,
        plan.twin,
        crate::model::target::NO_TWIN,
    );
    let result = OverheadResult {
        resolution_source,
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files),
        plan: plan.recorded(|r| crate::results::plan::RequestRecord::from(r)),
        mock,
        trials,
        combined,
        between,
        resources,
        valid,
        invalid_reasons,
        interrupted,
    };
    Ok((result, if valid { EXIT_OK } else { EXIT_FAILED }))
}

/// The sessions of `--sessions`, for paired rounds of conversations: only the file is taken
/// (think times are not waited, and the rounds set the pace).
fn sessions_of(
    args: &OverheadArgs,
    plan: &OverheadPlan,
) -> Result<
    Option<std::sync::Arc<crate::generator::sessions::plan::SessionPlan>>,
    crate::generator::plan_error::PlanError,
> {
    use crate::generator::plan_error::PlanError;
    let flags = &args.conversations;
    let paced = [
        ("--think", flags.think.is_some()),
        ("--max-sessions", flags.max_sessions.is_some()),
        ("--users", flags.users.is_some()),
        ("--turn-gap", flags.turn_gap.is_some()),
        ("--body", args.request.body.is_some()),
    ];
    if let Some((flag, _)) = paced.iter().find(|(_, given)| *given) {
        return Err(PlanError::Excludes(
            "overhead",
            flag,
            "its paired rounds send each session's turns back to back, one call a target at a time; use compare --sessions for paced conversations",
        ));
    }
    let Some(path) = &flags.sessions else {
        return Ok(None);
    };
    let set = crate::generator::sessions::load(path)?;
    if let Some(s) = set.sessions.iter().find(|s| !s.branches.is_empty()) {
        return Err(PlanError::File(
            "--sessions",
            path.display().to_string(),
            format!(
                "session {} has branches, which run beside its turns; overhead's paired rounds \
                 call one turn at a time: use compare --sessions for sessions with branches",
                s.id
            ),
        ));
    }
    let shape =
        crate::generator::planner::conversations::shape(flags, conversation_rounds::dialect(plan))?;
    Ok(Some(std::sync::Arc::new(
        crate::generator::sessions::plan::SessionPlan {
            set: std::sync::Arc::new(set),
            think: gatebench_shared::latency::Distribution::ZERO,
            max_sessions: None,
            users: None,
            shape,
            salt: None,
        },
    )))
}

fn summarise(
    plan: &OverheadPlan,
    trial: usize,
    request: &crate::wire::target::RequestSpec,
    calls: Vec<rounds::TargetCalls>,
) -> Trial {
    let names: Vec<crate::model::role::Role> =
        plan.targets.iter().map(|t| t.name.clone()).collect();
    let seed = plan.seed ^ ((trial as u64) << 32) ^ u64::from(request.stream);
    let deltas = deltas(
        &names,
        &calls,
        request.stream,
        plan.resamples,
        plan.confidence,
        seed,
    );
    let targets = names
        .iter()
        .zip(calls)
        .map(|(name, calls)| TargetTrial::new(name, calls, request.stream))
        .collect();
    Trial {
        trial: trial + 1,
        scenario: request.scenario.clone(),
        stream: request.stream,
        targets,
        deltas,
    }
}

/// Why the result cannot be trusted, if it cannot.
fn judge(plan: &OverheadPlan, trials: &[Trial], interrupted: bool) -> Vec<String> {
    let mut reasons = Vec::new();
    if interrupted {
        reasons.push("interrupted before every trial ran".to_string());
    }
    for trial in trials {
        for t in &trial.targets {
            if t.calls > 0 && t.failed as f64 > MAX_FAILED * t.calls as f64 {
                reasons.push(format!(
                    "{} failed {} of {} calls in trial {} ({}): {:?}",
                    t.name, t.failed, t.calls, trial.trial, trial.scenario, t.errors
                ));
            }
        }
        let gateways = plan.targets.len() - 1;
        let metrics = if trial.stream { 2 } else { 1 };
        if trial.deltas.len() < gateways * metrics {
            reasons.push(format!(
                "trial {} ({}) has no successful pair for some gateway",
                trial.trial, trial.scenario
            ));
        }
    }
    reasons
}

impl TargetTrial {
    pub fn new(name: &crate::model::role::Role, calls: TargetCalls, stream: bool) -> TargetTrial {
        let ok = calls.calls.iter().flatten().count();
        let e2e: Vec<Option<f64>> = calls.calls.iter().map(|c| c.map(|c| c.e2e_us)).collect();
        let ttft: Vec<Option<f64>> = calls
            .calls
            .iter()
            .map(|c| c.and_then(|c| c.ttft_us))
            .collect();
        // Present when any call carried the mock's timestamps.
        let legs = |pick: fn(&Call) -> Option<f64>| {
            let column: Vec<Option<f64>> = calls
                .calls
                .iter()
                .map(|c| c.as_ref().and_then(pick))
                .collect();
            column.iter().any(Option::is_some).then_some(column)
        };
        TargetTrial {
            name: name.clone(),
            calls: calls.calls.len(),
            ok,
            failed: calls.calls.len() - ok,
            errors: calls.errors,
            connections_opened: calls.connections_opened,
            connections_reused: calls.connections_reused,
            e2e_us: Percentiles::of(e2e.iter().flatten().copied()).unwrap_or_default(),
            ttft_us: stream
                .then(|| Percentiles::of(ttft.iter().flatten().copied()))
                .flatten(),
            rounds_e2e_us: e2e,
            rounds_ttft_us: stream.then_some(ttft),
            rounds_request_leg_us: legs(|c| c.request_leg_us),
            rounds_response_leg_us: legs(|c| c.response_leg_us),
        }
    }
}
