//! Each command from its options to its exit code: compute (the command's module), write the
//! result files (`output`), show the report (`report`). `main.rs` only parses and dispatches.

pub mod capacity;
pub mod check_profile;
pub mod compare;
mod corpus;
pub mod ladder;
pub mod merge;
pub mod overhead;
pub mod perf;
mod print_config;
mod report;
pub mod run;
pub mod sweep;

use crate::engine::run::EXIT_USAGE;
use crate::options::OverheadArgs;
use crate::options::{Cli, Command};
use crate::report::output::{write_atomically, write_json};

/// Runs the command `cli` names; the process's exit code.
pub fn execute(cli: Cli) -> u8 {
    let command = std::env::args().collect();
    let code = if cli.print_config {
        print_config::print(cli.command).map(|text| {
            show(&text);
            crate::engine::run::EXIT_OK
        })
    } else {
        match cli.command {
            Command::Run(args) => run::run_command(args, command),
            Command::Overhead(args) => overhead_command(args, command),
            Command::Compare(args) => compare_command(args, command),
            Command::Sweep(args) => sweep_command(args, command),
            Command::Ladder(args) => ladder_command(args, command),
            Command::Report(args) => report::report_command(args),
            Command::Corpus(args) => corpus::corpus_command(args),
            Command::Capacity(args) => capacity_command(args, command),
            Command::Merge(args) => merge_command(args, command),
            Command::Profile(args) => profile_command(args, command),
            Command::CheckProfile(args) => {
                check_profile::check(&args.command, &args.profile).map(|plan| {
                    show(&format!("ok: {plan}\n"));
                    crate::engine::run::EXIT_OK
                })
            }
        }
    };
    code.unwrap_or_else(|err| {
        let err: &(dyn std::error::Error + 'static) = err.as_ref();
        gatebench_shared::say!("loadgen: {}", gatebench_shared::errors::one_line(err));
        EXIT_USAGE
    })
}

fn overhead_command(args: OverheadArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = crate::commands::overhead::run_overhead(args, command)?;
    let report = crate::report::overhead::terminal(&result);
    written(&result, result.plan.out.as_deref(), &report, code)
}

fn capacity_command(
    args: crate::options::CapacityArgs,
    command: Vec<String>,
) -> anyhow::Result<u8> {
    let (result, code) = crate::commands::capacity::run_capacity(args, command)?;
    let report = crate::commands::capacity::terminal(&result);
    written(&result, result.plan.out.as_deref(), &report, code)
}

fn profile_command(args: crate::options::ProfileArgs, command: Vec<String>) -> anyhow::Result<u8> {
    if let [before, after] = args.diff.as_slice() {
        let out = args.compare.run.out.clone();
        let svg_only = out
            .as_deref()
            .is_some_and(|o| o.extension().is_some_and(|e| e == "svg"));
        let (text, summary) = crate::commands::perf::diff::render(before, after, svg_only)?;
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
        return Ok(crate::engine::run::EXIT_OK);
    }
    let (result, code) = crate::commands::perf::run_profile(args, command)?;
    let report = crate::report::profile_view::terminal(&result);
    written(&result, result.compare.plan.out.as_deref(), &report, code)
}

fn merge_command(args: crate::options::MergeArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let merged = crate::commands::merge::run_merge(&args, command)?;
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
    Ok(if merged.valid {
        crate::engine::run::EXIT_OK
    } else {
        crate::engine::run::EXIT_FAILED
    })
}

fn compare_command(args: crate::options::CompareArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = crate::commands::compare::run_compare(args, command)?;
    written(
        &result,
        result.plan.out.as_deref(),
        &crate::report::compare::terminal(&result),
        code,
    )
}

fn sweep_command(args: crate::options::SweepArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = crate::commands::sweep::run_sweep(args, command)?;
    written(
        &result,
        result.plan.out.as_deref(),
        &crate::report::sweep::terminal(&result),
        code,
    )
}

fn ladder_command(args: crate::options::LadderArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = crate::commands::ladder::run_ladder(args, command)?;
    written(
        &result,
        result.plan.out.as_deref(),
        &crate::report::ladder::terminal(&result),
        code,
    )
}

/// Writes `result` to `out` (when given), shows its report, and passes its exit code on.
fn written<R: serde::Serialize>(
    result: &R,
    out: Option<&std::path::Path>,
    report: &str,
    code: u8,
) -> anyhow::Result<u8> {
    if let Some(path) = out {
        write_json(result, path)?;
    }
    show(report);
    Ok(code)
}

/// Prints a report to stdout. A reader that went away (`| head`) is not an error: the result
/// files are already written by then.
fn show(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(text.as_bytes());
}
