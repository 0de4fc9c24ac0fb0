//! `loadgen merge` as a [`Command`]: the shards merged, the merged result (or log) written and
//! its report shown.

use super::super::command::no_preset;
use super::super::{show, Command};
use super::run_merge;
use crate::engine::run::{EXIT_FAILED, EXIT_OK};
use crate::options::MergeArgs;
use crate::report::output::write_atomically;

impl Command for MergeArgs {
    type Plan = MergeArgs;

    fn plan(self) -> anyhow::Result<MergeArgs> {
        // Bad thresholds are refused before any file is read.
        super::Thresholds::from_args(&self)?;
        super::Absent::parse(&self.absent)?;
        Ok(self)
    }

    fn execute(args: MergeArgs, command_line: Vec<String>) -> anyhow::Result<u8> {
        let merged = run_merge(&args, command_line)?;
        match &args.out {
            Some(path) if path.as_os_str() == "-" => {
                show(&merged.output);
                gatebench_shared::say!("{}", merged.report.trim_end());
            }
            Some(path) => {
                write_atomically(path, merged.output.as_bytes())?;
                show(&merged.report);
            }
            None => show(&merged.report),
        }
        for failed in &merged.failed {
            gatebench_shared::say!("loadgen: merge: {failed}");
        }
        Ok(if merged.valid && merged.failed.is_empty() {
            EXIT_OK
        } else {
            EXIT_FAILED
        })
    }

    fn preset(_: &MergeArgs) -> anyhow::Result<toml::Table> {
        Err(no_preset())
    }

    fn describe(args: &MergeArgs) -> String {
        format!("merge: {} input(s)", args.inputs.len())
    }
}
