//! `loadgen run`: plan, start the workers, watch them, merge, judge, report; and, in `run/`,
//! the toolkit every command that measures targets shares: running one target and its
//! measured window (`target`, `watch`, `summary`), the stop on Ctrl-C (`stop`), the exit codes
//! and setup errors (`exit`), and the checks made before any load is sent (`preflight`).

mod exit;
mod preflight;
mod stop;
mod summary;
mod target;
mod watch;

pub use exit::{SetupError, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};
pub(crate) use preflight::{check_connections, check_open_files, probe};
pub(crate) use stop::{stop_flag, stop_requested};
pub(crate) use target::{run_target, run_target_watched};
pub(crate) use watch::Window;

use std::sync::Arc;

use gatebench_shared::host::raise_open_file_limit;

use crate::engine::embedded::EmbeddedMock;
use crate::generator::plan::{Load, Plan};
use crate::generator::schedule::Arrival;
use crate::options::RunArgs;
use crate::results::run::{RunResult, TargetRun, SCHEMA};

/// The demo's rate for whole answers.
const DEMO_RATE: f64 = 5_000.0;

/// The demo's rate for 16-token streams: each is 18 events for the generator to read, and at
/// 5,000 a second (90,000 events) one generator core on a 2-core machine falls behind its own
/// schedule (lag p99 4.5 ms), which makes the run invalid; 2,000 a second keeps it under 1 ms.
const DEMO_STREAM_RATE: f64 = 2_000.0;

/// Runs `loadgen run` and returns the result with the exit code it earns.
pub fn run(args: RunArgs, command: Vec<String>) -> anyhow::Result<(RunResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let args = crate::options::profile::run(args)?;
    let demo = args.targets.is_empty();
    let demo_rates = demo && args.rate.is_none() && args.concurrency.is_none();
    let open = |rate| {
        demo_rates.then_some(Load::Open {
            rate,
            arrival: Arrival::Constant,
        })
    };
    let mut plan = args
        .clone()
        .plan_at(open(DEMO_RATE))
        .map_err(SetupError::from)?;
    // Each phase: the plan with a scenario's requests, at the demo's own rate for it when no
    // load was asked for.
    let phases: Vec<Plan> = if demo && args.scenario.is_none() && args.body.is_none() {
        let streams = Plan {
            request: args
                .request(Some("chat-stream"))
                .map_err(SetupError::from)?,
            load: match plan.load {
                Load::Open { arrival, .. } if demo_rates => Load::Open {
                    rate: DEMO_STREAM_RATE,
                    arrival,
                },
                load => load,
            },
            ..plan.clone()
        };
        vec![plan.clone(), streams]
    } else {
        vec![plan.clone()]
    };
    check_together(&plan)?;
    let open_files = raise_open_file_limit().ok();
    check_open_files(&plan, open_files.as_ref())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let mock = if demo {
        // The mock gets the last core; the generator the others.
        let mock = EmbeddedMock::start(cores).map_err(|e| SetupError::Other(e.to_string()))?;
        plan.targets = vec![mock.target.clone()];
        if plan.pin.is_empty() && cores >= 2 {
            plan.pin = (0..cores - 1).collect();
        }
        Some(mock)
    } else {
        None
    };
    for target in &plan.targets {
        probe(target, plan.timeout)?;
    }
    if let Some(reference) = &plan.clock_ref {
        if crate::generator::clock_ref::measure(reference).is_none() {
            return Err(SetupError::Other(format!(
                "--clock-ref {}: no gatebench mock's clock answers at {}{}",
                reference.url,
                reference.resolved,
                crate::generator::clock_ref::CLOCK_PATH
            ))
            .into());
        }
    }
    // The embedded mock's configuration, or the first target's when it is a gatebench mock.
    let mock_config = match &mock {
        Some(m) => Some(m.config_toml.clone()),
        None => plan
            .targets
            .first()
            .and_then(crate::engine::disclose::mock_config),
    };
    let (runs, final_plan) = run_phases(&plan, phases);
    let valid = runs.iter().all(|r| r.validity.valid);
    let result = RunResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files),
        plan: (&final_plan).into(),
        mock: mock_config,
        runs,
        valid,
        shards: None,
    };
    drop(mock);
    let code = judge(&result, &plan);
    Ok((result, code))
}

/// Runs every target under every phase in turn (stopping early on Ctrl-C), each phase on the
/// plan's targets and cores; returns the runs and the plan to disclose.
fn run_phases(plan: &Plan, phases: Vec<Plan>) -> (Vec<TargetRun>, Plan) {
    let mut runs = Vec::new();
    let mut disclosed = plan.clone();
    let phases: Vec<Arc<Plan>> = phases
        .into_iter()
        .map(|phase| {
            Arc::new(Plan {
                targets: plan.targets.clone(),
                pin: plan.pin.clone(),
                ..phase
            })
        })
        .collect();
    for target in &plan.targets {
        for phase in &phases {
            if stop_requested() {
                return (runs, disclosed);
            }
            disclosed.request = phase.request.clone();
            runs.push(run_target(phase.clone(), target.clone()));
        }
    }
    (runs, disclosed)
}

/// A shard or a start instant needs one run (one target, one scenario: later runs could not
/// start together) and a start that is ahead, but not absurdly far.
fn check_together(plan: &Plan) -> Result<(), SetupError> {
    if plan.shard.count == 1 && plan.start_at.is_none() {
        return Ok(());
    }
    if plan.targets.len() != 1 {
        return Err(SetupError::Other(
            "--shard and --start-at take exactly one --target: processes on several hosts can \
             start one run together, not a sequence of runs"
                .into(),
        ));
    }
    if let Some(at) = plan.start_at {
        let now = std::time::SystemTime::now();
        if at < now {
            let ago = now.duration_since(at).unwrap_or_default();
            return Err(SetupError::Other(format!(
                "--start-at {} is {:.1} s in the past: the shards cannot start together; pick an \
                 instant far enough ahead for every shard to be running by then",
                crate::generator::start_at::format(at),
                ago.as_secs_f64()
            )));
        }
        if at.duration_since(now).unwrap_or_default() > crate::generator::start_at::MAX_AHEAD {
            return Err(SetupError::Other(format!(
                "--start-at {} is more than a day ahead",
                crate::generator::start_at::format(at)
            )));
        }
    }
    Ok(())
}

/// Exit 1 when the run is invalid or a threshold failed, 130 when a run with a planned end was
/// interrupted; say why on stderr.
fn judge(result: &RunResult, plan: &Plan) -> u8 {
    let mut code = if result.valid { EXIT_OK } else { EXIT_FAILED };
    let planned = plan.duration.is_some() || plan.requests.is_some();
    if planned && (stop_requested() || result.runs.iter().any(|r| r.interrupted)) {
        gatebench_shared::say!(
            "loadgen: interrupted: the result holds what ran before the signal, marked \
             \"interrupted\"; requests still in flight after the grace are counted as cancelled"
        );
        return EXIT_INTERRUPTED;
    }
    for run in &result.runs {
        if let Some(max) = plan.max_error_rate {
            let rate = 1.0 - run.success_rate;
            if rate > max {
                gatebench_shared::say!(
                    "loadgen: {}: error rate {:.4} is over --max-error-rate {max}",
                    run.target.url,
                    rate
                );
                code = EXIT_FAILED;
            }
        }
        if let (Some(max), Some(s)) = (plan.max_p99, run.metrics.get("response_time")) {
            if s.p99 as u128 > max.as_micros() {
                gatebench_shared::say!(
                    "loadgen: {}: response-time p99 {} us is over --max-p99 {} us",
                    run.target.url,
                    s.p99,
                    max.as_micros()
                );
                code = EXIT_FAILED;
            }
        }
    }
    code
}
