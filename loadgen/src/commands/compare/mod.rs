//! `loadgen compare`: the same constant-rate load direct and through each gateway, in
//! alternating trials (direct, gateways, direct, gateways, …), with each percentile's added
//! latency and an interval across trials (the trials and their analysis are the engine's
//! comparison machinery, shared with sweep and profile).

use gatebench_shared::host::raise_open_file_limit;

use super::command::{over_preset, table};
use super::{written, Command};

use crate::engine::comparison::{analyse_with_turns, run_trials, Comparison, Ran};
use crate::engine::comparison::{resolved, stand_in_targets};
use crate::engine::run::{stop_flag, SetupError, EXIT_FAILED, EXIT_OK};
use crate::engine::sampler::Sampling;
use crate::engine::twin::reach;
use crate::generator::plan::Plan;
use crate::options::CompareArgs;
use crate::options::COMPARE_TRIALS as DEFAULT_TRIALS;
use crate::results::compare::{CompareResult, SCHEMA};

/// A validated `loadgen compare`, made once from its options (flags over the preset): what it
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
    /// Checks `args` (with its preset under it) without sending anything.
    pub fn new(args: CompareArgs) -> anyhow::Result<ComparePlan> {
        let args = args.merged()?;
        let comparison = Comparison::new(&args, "compare", true, DEFAULT_TRIALS)?;
        let plan = args.load.clone().plan().map_err(SetupError::from)?;
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

impl Command for CompareArgs {
    type Plan = ComparePlan;

    fn merged(self) -> anyhow::Result<CompareArgs> {
        let path = self.load.preset.clone();
        over_preset(self, path.as_deref())
    }

    fn stand_ins(mut self) -> CompareArgs {
        stand_in_targets(&mut self.targets);
        self
    }

    fn plan(self) -> anyhow::Result<ComparePlan> {
        ComparePlan::new(self)
    }

    fn execute(plan: ComparePlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = execute(plan, command_line)?;
        let report = crate::report::compare::terminal(&result);
        written(&result, result.header.plan.out.as_deref(), &report, code)
    }

    fn preset(p: &ComparePlan) -> anyhow::Result<toml::Table> {
        Ok(table(&resolved(&p.args, &p.plan, &p.comparison)))
    }

    fn describe(p: &ComparePlan) -> String {
        format!(
            "compare: {:?}, {} trial(s) per target",
            p.plan.load, p.comparison.trials
        )
    }
}

/// Runs `loadgen compare` and returns the result with the exit code it earns.
pub fn run_compare(args: CompareArgs, command: Vec<String>) -> anyhow::Result<(CompareResult, u8)> {
    execute(ComparePlan::new(args)?, command)
}

/// Runs `plan` and returns the result with the exit code it earns.
fn execute(plan: ComparePlan, command: Vec<String>) -> anyhow::Result<(CompareResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let ComparePlan {
        mut comparison,
        plan,
        ..
    } = plan;
    // The twin loadgen starts, if any, runs until this returns.
    let (mock, _twin) = reach(&mut comparison.targets, plan.timeout)?;
    let c = &comparison;
    let open_files = raise_open_file_limit().ok();
    crate::engine::run::check_open_files(&plan, open_files.as_ref())?;
    let stop = stop_flag();
    let sampling = Sampling::start(c.samples.clone());
    let runs = run_trials(&plan, &c.targets, c.trials, c.settle, "");
    let resources = sampling.finish();
    let interrupted = stop.stop.load(std::sync::atomic::Ordering::Relaxed);
    let (summary, deltas, turn_deltas) =
        analyse_with_turns(&c.targets, &runs, c.twin, c.min_effect_us);
    let envelope = crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files);
    let ran = Ran {
        runs,
        summary,
        deltas,
        turn_deltas,
        resources,
        interrupted,
    };
    let result = CompareResult::judged(envelope, plan, comparison, mock, ran);
    let code = if result.footer.valid {
        EXIT_OK
    } else {
        EXIT_FAILED
    };
    Ok((result, code))
}

#[cfg(test)]
mod simulated;
