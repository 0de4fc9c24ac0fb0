//! `loadgen overhead` as a [`Command`]: the options merged with the preset, checked into a
//! plan, run, and printed back as a preset.

use gatebench_shared::duration::format_us;

use super::super::command::{over_preset, table};
use super::super::written;
use super::super::Command;
use super::plan::OverheadPlan;
use crate::engine::comparison::stand_in_targets;
use crate::engine::run::SetupError;
use crate::generator::plan::{DEFAULT_MAX_TOKENS, DEFAULT_MODEL};
use crate::options::{JudgeFlags, OverheadArgs, RequestFlags};

/// A validated `loadgen overhead`: the options as merged, and their plan.
#[derive(Debug)]
pub struct Overhead {
    pub args: OverheadArgs,
    pub plan: OverheadPlan,
    /// Conversations in place of single requests (`--sessions`).
    pub sessions: Option<std::sync::Arc<crate::generator::sessions::plan::SessionPlan>>,
}

impl Command for OverheadArgs {
    type Plan = Overhead;

    fn merged(self) -> anyhow::Result<OverheadArgs> {
        let path = self.preset.clone();
        over_preset(self, path.as_deref())
    }

    fn stand_ins(mut self) -> OverheadArgs {
        stand_in_targets(&mut self.targets);
        self
    }

    fn plan(self) -> anyhow::Result<Overhead> {
        let plan = OverheadArgs::plan(self.clone()).map_err(SetupError::from)?;
        let sessions = super::sessions_of(&self, &plan).map_err(SetupError::from)?;
        Ok(Overhead {
            args: self,
            plan,
            sessions,
        })
    }

    fn execute(checked: Overhead, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = super::execute(checked, command_line)?;
        let report = crate::report::overhead::terminal(&result);
        written(&result, result.plan.out.as_deref(), &report, code)
    }

    fn preset(checked: &Overhead) -> anyhow::Result<toml::Table> {
        let (args, plan) = (&checked.args, &checked.plan);
        let given = &args.request;
        let scenario_body = given.body.is_none();
        let resolved = OverheadArgs {
            preset: None,
            rounds: Some(plan.rounds),
            warmup_rounds: Some(plan.warmup_rounds),
            round_gap: Some(format_us(plan.round_gap.as_micros() as u64)),
            resamples: Some(plan.resamples),
            judge: JudgeFlags {
                trials: Some(plan.trials),
                ..args.judge.clone()
            },
            request: RequestFlags {
                scenario: scenario_body.then(|| {
                    let names: Vec<&str> =
                        plan.requests.iter().map(|r| r.scenario.as_str()).collect();
                    names.join(",")
                }),
                model: scenario_body
                    .then(|| given.model.as_deref().unwrap_or(DEFAULT_MODEL).to_string()),
                max_tokens: scenario_body.then(|| given.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
                timeout: Some(format_us(plan.timeout.as_micros() as u64)),
                seed: Some(plan.seed),
                ..given.clone()
            },
            ..args.clone()
        };
        Ok(table(&resolved))
    }

    fn describe(checked: &Overhead) -> String {
        let plan = &checked.plan;
        format!(
            "overhead: {} trials x {} rounds (+{} warm-up), {} scenario(s)",
            plan.trials,
            plan.rounds,
            plan.warmup_rounds,
            plan.requests.len()
        )
    }
}
