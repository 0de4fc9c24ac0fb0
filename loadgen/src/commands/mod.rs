//! Each command from its options to its exit code: compute (the command's module), write the
//! result files (`output`), show the report (`report`). `main.rs` only parses and dispatches.

pub mod capacity;
pub mod check_profile;
pub mod compare;
pub mod ladder;
pub mod merge;
pub mod overhead;
pub mod perf;
mod print_config;
pub mod sweep;

use crate::engine::run::{run, EXIT_USAGE};
use crate::options::OverheadArgs;
use crate::options::{Cli, Command, ReportArgs, RunArgs};
use crate::report::output::{write_atomically, write_hdr_log, write_hgrm, write_json};

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
            Command::Run(args) => run_command(args, command),
            Command::Overhead(args) => overhead_command(args, command),
            Command::Compare(args) => compare_command(args, command),
            Command::Sweep(args) => sweep_command(args, command),
            Command::Ladder(args) => ladder_command(args, command),
            Command::Report(args) => report_command(args),
            Command::Corpus(args) => corpus_command(args),
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

fn run_command(args: RunArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = run(args, command)?;
    // From the flags or the profile.
    let plan = &result.plan;
    let (out, hgrm, hdr_log) = (plan.out.clone(), plan.hgrm.clone(), plan.hdr_log.clone());
    if let Some(dir) = hgrm {
        write_hgrm(&result, &dir)?;
    }
    if let Some(dir) = hdr_log {
        write_hdr_log(&result, &dir)?;
    }
    let report = crate::report::terminal::summary(&result);
    match out {
        // The result on standard output (say, for `kubectl logs`), the report beside it.
        Some(path) if path.as_os_str() == "-" => {
            show(&serde_json::to_string(&result)?);
            show("\n");
            gatebench_shared::say!("{}", report.trim_end());
        }
        Some(path) => {
            write_json(&result, &path)?;
            show(&report);
        }
        None => show(&report),
    }
    Ok(code)
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
    let report = crate::report::capacity::terminal(&result);
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
    let report = crate::report::profile::terminal(&result);
    written(&result, result.compare.plan.out.as_deref(), &report, code)
}

fn corpus_command(args: crate::options::CorpusArgs) -> anyhow::Result<u8> {
    let spec = args.spec()?;
    let mut text = Vec::new();
    let written = crate::generator::corpus::synth::generate(&spec, &mut text)?;
    if args.out.as_os_str() == "-" {
        show(&String::from_utf8_lossy(&text));
    } else {
        write_atomically(&args.out, &text)?;
    }
    gatebench_shared::say!(
        "loadgen: {} requests ({} distinct, {} streaming), bodies {} to {} bytes, mean {:.0} \
         prompt and {:.0} output tokens",
        written.lines,
        written.distinct,
        written.streaming,
        written.min_bytes,
        written.max_bytes,
        written.mean_prompt_tokens,
        written.mean_output_tokens
    );
    Ok(crate::engine::run::EXIT_OK)
}

fn report_command(args: ReportArgs) -> anyhow::Result<u8> {
    use crate::report::{leaderboard, render::Format};
    let text = match (args.combine, args.results.as_slice()) {
        (false, [one]) => crate::report::render::render(one, args.format)?,
        (false, _) => anyhow::bail!(
            "report renders one result file; give --combine to put several `loadgen compare` \
             results in one table"
        ),
        (true, paths) => {
            let views = leaderboard::read(paths)?;
            match args.format {
                Format::Md => leaderboard::markdown(&views),
                Format::Html => leaderboard::html(&views),
                Format::Csv => leaderboard::csv(&views),
                Format::Json => anyhow::bail!(
                    "--combine writes md, html or csv; each result is its own JSON already"
                ),
            }
        }
    };
    match args.out {
        Some(path) => write_atomically(&path, text.as_bytes())?,
        None => show(&text),
    }
    Ok(crate::engine::run::EXIT_OK)
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
