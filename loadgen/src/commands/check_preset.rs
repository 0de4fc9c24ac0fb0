//! `loadgen check-preset COMMAND FILE`: reads a preset for a command and makes its plan,
//! sending nothing. The command is found as the command line finds it, and its plan made as
//! the command makes it (the [`Command`] trait), with stand-ins for the targets a preset
//! leaves to the command line.

use std::path::Path;

use clap::Parser as _;

use super::Cli;
use super::{dispatch, Action, Command, Outcome};
use crate::engine::run::EXIT_OK;
use crate::options::CheckPresetArgs;

/// Checks `path` as a preset of `command` (run, overhead, compare, sweep, ladder, capacity or
/// profile) and returns a one-line description of the plan it makes.
pub fn check(command: &str, path: &Path) -> anyhow::Result<String> {
    let line = [
        "loadgen".as_ref(),
        command.as_ref(),
        "--preset".as_ref(),
        path.as_os_str(),
    ];
    let cli = Cli::try_parse_from(line).map_err(|e| {
        anyhow::anyhow!(
            "cannot check a preset for '{command}': expected run, overhead, compare, sweep, \
             ladder, capacity or profile ({})",
            e.kind()
        )
    })?;
    match dispatch(cli.command, Action::Check(path), Vec::new())? {
        Outcome::Text(text) => Ok(text),
        // Invariant: `act` answers a check with the plan's description, never a code.
        Outcome::Code(_) => unreachable!("a check describes a plan"),
    }
}

/// One line on the plan `args` make with their preset (`path`) under them.
pub(crate) fn describe<C: Command>(args: C, path: &Path) -> anyhow::Result<String> {
    let args = args.merged()?.stand_ins();
    let plan = args
        .plan()
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(C::describe(&plan))
}

impl Command for CheckPresetArgs {
    type Plan = CheckPresetArgs;

    fn plan(self) -> anyhow::Result<CheckPresetArgs> {
        Ok(self)
    }

    fn execute(args: CheckPresetArgs, _: Vec<String>) -> anyhow::Result<u8> {
        let plan = check(&args.command, &args.preset)?;
        super::show(&format!("ok: {plan}\n"));
        Ok(EXIT_OK)
    }

    fn preset(_: &CheckPresetArgs) -> anyhow::Result<toml::Table> {
        Err(super::command::no_preset())
    }

    fn describe(args: &CheckPresetArgs) -> String {
        format!("check-preset {}", args.command)
    }
}
