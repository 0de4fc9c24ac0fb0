//! `loadgen profile` as a [`Command`]: a sampled load (`ProfilePlan`), or `--diff` of two
//! folded stack files.

use std::path::PathBuf;

use super::super::command::{over_preset, table};
use super::super::{show, written, Command};
use super::{run_plan, ProfilePlan};
use crate::engine::comparison::{resolved, stand_in_targets};
use crate::engine::run::EXIT_OK;
use crate::options::ProfileArgs;
use crate::report::output::write_atomically;

/// What `loadgen profile` runs.
#[derive(Debug)]
pub enum ProfileMode {
    /// A differential flame graph of two folded stack files, written to `out`.
    Diff {
        before: PathBuf,
        after: PathBuf,
        out: Option<PathBuf>,
    },
    /// A load on one gateway with its process sampled.
    Sample(Box<ProfilePlan>),
}

impl Command for ProfileArgs {
    type Plan = ProfileMode;

    fn merged(self) -> anyhow::Result<ProfileArgs> {
        // `--diff`, `--pid` and `--perf` name things of this machine: the command line's only.
        let (diff, pid, perf) = (self.diff.clone(), self.pid, self.perf.clone());
        let path = self.compare.load.preset.clone();
        let merged = over_preset(self, path.as_deref())?;
        Ok(ProfileArgs {
            diff,
            pid,
            perf,
            ..merged
        })
    }

    fn stand_ins(mut self) -> ProfileArgs {
        // This process stands for the gateway's: nothing is sampled.
        self.pid = self.pid.or(Some(std::process::id()));
        stand_in_targets(&mut self.compare.targets);
        self
    }

    fn plan(self) -> anyhow::Result<ProfileMode> {
        match <[PathBuf; 2]>::try_from(self.diff.clone()) {
            Ok([before, after]) => Ok(ProfileMode::Diff {
                before,
                after,
                out: self.compare.load.out,
            }),
            Err(_) => Ok(ProfileMode::Sample(Box::new(ProfilePlan::new(self)?))),
        }
    }

    fn execute(plan: ProfileMode, command_line: Vec<String>) -> anyhow::Result<u8> {
        match plan {
            ProfileMode::Diff { before, after, out } => diff(&before, &after, out),
            ProfileMode::Sample(p) => {
                let (result, code) = run_plan(*p, command_line)?;
                let report = crate::report::profile::terminal(&result);
                written(
                    &result,
                    result.compare.header.plan.out.as_deref(),
                    &report,
                    code,
                )
            }
        }
    }

    fn preset(plan: &ProfileMode) -> anyhow::Result<toml::Table> {
        let ProfileMode::Sample(p) = plan else {
            anyhow::bail!("--print-config is for a profile's load, not for --diff");
        };
        Ok(table(&ProfileArgs {
            frequency: Some(p.frequency),
            call_graph: Some(p.call_graph.name().to_string()),
            off_cpu: Some(if p.off_cpu { "on" } else { "off" }.to_string()),
            compare: resolved(&p.args.compare, &p.plan, &p.comparison),
            ..ProfileArgs::default()
        }))
    }

    fn describe(plan: &ProfileMode) -> String {
        match plan {
            ProfileMode::Diff { .. } => "profile: --diff of two folded stack files".into(),
            ProfileMode::Sample(p) => format!(
                "profile: {:?}, {} trial(s), {} Hz, {} stacks, off-CPU {}",
                p.plan.load,
                p.comparison.trials,
                p.frequency,
                p.call_graph.name(),
                if p.off_cpu { "on" } else { "off" }
            ),
        }
    }
}

/// Writes the differential flame graph of `before` and `after` (standard output without
/// `out`, or with `-`), and shows its summary.
fn diff(
    before: &std::path::Path,
    after: &std::path::Path,
    out: Option<PathBuf>,
) -> anyhow::Result<u8> {
    let svg_only = out
        .as_deref()
        .is_some_and(|o| o.extension().is_some_and(|e| e == "svg"));
    let (text, summary) = super::diff::render(before, after, svg_only)?;
    match out {
        Some(path) if path.as_os_str() != "-" => {
            write_atomically(&path, text.as_bytes())?;
            show(&summary);
        }
        _ => {
            show(&text);
            gatebench_shared::say!("{}", summary.trim_end());
        }
    }
    Ok(EXIT_OK)
}
