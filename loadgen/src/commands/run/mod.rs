//! `loadgen run`: plan (`plan`), start the embedded mock for the demo, run every target under
//! every phase, judge the exit code (`verdict`), write the result files and show the report.

mod plan;
mod verdict;

use std::sync::Arc;

use gatebench_shared::host::raise_open_file_limit;

use crate::engine::embedded::EmbeddedMock;
use crate::engine::metrics_endpoint::MetricsEndpoint;
use crate::engine::run::{check_open_files, probe, run_target, stop_requested, SetupError};
use crate::generator::plan::Plan;
use crate::results::run::{RunResult, TargetRun, SCHEMA};

pub use plan::RunPlan;

use super::command::{over_preset, table};
use super::{show, Command};
use crate::options::LoadArgs;
use crate::report::output::{write_hdr_log, write_hgrm, write_json};

/// Runs `loadgen run` and returns the result with the exit code it earns.
pub fn run(args: LoadArgs, command: Vec<String>) -> anyhow::Result<(RunResult, u8)> {
    execute(RunPlan::new(args.merged()?)?, command)
}

/// Runs `plan` and returns the result with the exit code it earns.
pub fn execute(plan: RunPlan, command: Vec<String>) -> anyhow::Result<(RunResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let RunPlan {
        mut plan,
        phases,
        demo,
        metrics_listen,
        metrics_linger,
        ..
    } = plan;
    let open_files = raise_open_file_limit().ok();
    check_open_files(&plan, open_files.as_ref())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mock = if demo {
        // The mock gets the last core; the generator the others.
        let mock = EmbeddedMock::start(cores).map_err(|e| SetupError::Other(e.to_string()))?;
        plan.targets = vec![mock.target.clone()];
        if plan.cores.is_empty() && cores >= 2 {
            plan.cores = (0..cores - 1).collect();
        }
        Some(mock)
    } else {
        None
    };
    reach(&plan)?;
    let endpoint = metrics_listen.map(MetricsEndpoint::start).transpose()?;
    if let Some(endpoint) = &endpoint {
        plan.live = Some(endpoint.registry());
        if !plan.quiet {
            gatebench_shared::say!("loadgen: live metrics at http://{}/metrics", endpoint.addr);
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
    if let Some(endpoint) = endpoint {
        linger(&endpoint, metrics_linger, plan.quiet);
    }
    let code = verdict::judge(&result, &plan);
    Ok((result, code))
}

/// Keeps `endpoint` serving the final counts for `linger` (cut short by Ctrl-C), then stops it.
fn linger(endpoint: &MetricsEndpoint, linger: std::time::Duration, quiet: bool) {
    if linger.is_zero() {
        return;
    }
    if !quiet {
        gatebench_shared::say!(
            "loadgen: the run is over; its final counts stay at http://{}/metrics for {}",
            endpoint.addr,
            humantime::format_duration(linger)
        );
    }
    crate::engine::comparison::pause(linger);
}

/// Refuses targets (and a reference clock) that cannot be reached before any load is sent.
fn reach(plan: &Plan) -> Result<(), SetupError> {
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
            )));
        }
    }
    Ok(())
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
                cores: plan.cores.clone(),
                live: plan.live.clone(),
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

impl Command for LoadArgs {
    type Plan = RunPlan;

    fn merged(self) -> anyhow::Result<LoadArgs> {
        let path = self.preset.clone();
        over_preset(self, path.as_deref())
    }

    fn plan(self) -> anyhow::Result<RunPlan> {
        RunPlan::new(self)
    }

    fn execute(plan: RunPlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = execute(plan, command_line)?;
        written(&result)?;
        Ok(code)
    }

    fn preset(p: &RunPlan) -> anyhow::Result<toml::Table> {
        let mut preset = table(&p.args.resolved(&p.plan));
        if p.demo_rates {
            // The demo picks its own rate for each of its phases.
            preset.remove("rate");
        }
        Ok(preset)
    }

    fn describe(p: &RunPlan) -> String {
        format!("run: {:?}", p.plan.load)
    }
}

/// Writes the result files the plan names (from the flags or the preset) and shows the report.
fn written(result: &RunResult) -> anyhow::Result<()> {
    let plan = &result.plan;
    if let Some(dir) = &plan.hgrm {
        write_hgrm(result, dir)?;
    }
    if let Some(dir) = &plan.hdr_log {
        write_hdr_log(result, dir)?;
    }
    let report = crate::report::terminal::summary(result);
    match &plan.out {
        // The result on standard output (say, for `kubectl logs`), the report beside it.
        Some(path) if path.as_os_str() == "-" => {
            show(&serde_json::to_string(result)?);
            show("\n");
            gatebench_shared::say!("{}", report.trim_end());
        }
        Some(path) => {
            write_json(result, path)?;
            show(&report);
        }
        None => show(&report),
    }
    Ok(())
}
