//! The one shape of every command: options (flags over the preset) checked into a plan before
//! anything is sent, the plan run to an exit code, and the plan's options printed back as a
//! preset. `--print-config` and `check-preset` go through it, as running a command does.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A command of loadgen, implemented by each command's options.
pub trait Command: Sized {
    /// What the command runs, validated.
    type Plan;

    /// The options with those of their `--preset` under them; commands that take no preset
    /// keep theirs.
    fn merged(self) -> anyhow::Result<Self> {
        Ok(self)
    }

    /// Stand-ins for what a preset leaves to the command line (the targets, a process), so
    /// `check-preset` can make the plan; nothing is sent to them.
    fn stand_ins(self) -> Self {
        self
    }

    /// The merged options checked into the plan, sending nothing.
    fn plan(self) -> anyhow::Result<Self::Plan>;

    /// Runs the plan: writes its result files, shows its report; the exit code it earns.
    fn execute(plan: Self::Plan, command_line: Vec<String>) -> anyhow::Result<u8>;

    /// The plan's options as a preset: every setting it resolved, defaults filled in
    /// (`--print-config`).
    fn preset(plan: &Self::Plan) -> anyhow::Result<toml::Table>;

    /// One line on the plan (`check-preset`).
    fn describe(plan: &Self::Plan) -> String;
}

/// `flags` with those of the preset at `path` (when there is one) under them.
pub(crate) fn over_preset<T: Serialize + DeserializeOwned>(
    flags: T,
    path: Option<&Path>,
) -> anyhow::Result<T> {
    crate::options::preset::over_preset(flags, path)
}

/// The refusal of `--print-config` and `check-preset` by a command that takes no preset.
pub(crate) fn no_preset() -> anyhow::Error {
    anyhow::anyhow!(
        "--print-config is for run, overhead, compare, sweep, ladder, capacity and profile \
         (merge, report, check-preset and corpus take no preset)"
    )
}

/// A set of options as a TOML table. Invariant: options are strings, numbers, booleans and
/// arrays of them, which always serialise.
pub(crate) fn table<T: Serialize>(options: &T) -> toml::Table {
    toml::Table::try_from(options).expect("options serialise to TOML")
}
