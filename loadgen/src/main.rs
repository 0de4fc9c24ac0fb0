use std::process::ExitCode;

use clap::Parser;
use loadgen::cli::ReportArgs;
use loadgen::output::{write_atomically, write_hdr_log, write_hgrm, write_json};
use loadgen::overhead::plan::OverheadArgs;
use loadgen::run::{run, EXIT_USAGE};
use loadgen::{Cli, Command, RunArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = std::env::args().collect();
    let code = match cli.command {
        Command::Run(args) => run_command(args, command),
        Command::Overhead(args) => overhead_command(args, command),
        Command::Compare(args) => compare_command(args, command),
        Command::Sweep(args) => sweep_command(args, command),
        Command::Ladder(args) => ladder_command(args, command),
        Command::Report(args) => report_command(args),
        Command::Merge(args) => merge_command(args, command),
        Command::CheckProfile(args) => {
            loadgen::profile::check(&args.command, &args.profile).map(|plan| {
                println!("ok: {plan}");
                loadgen::run::EXIT_OK
            })
        }
    };
    match code {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let err: &(dyn std::error::Error + 'static) = err.as_ref();
            gatebench_shared::say!("loadgen: {}", gatebench_shared::errors::one_line(err));
            ExitCode::from(EXIT_USAGE)
        }
    }
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
    let report = loadgen::report::terminal::summary(&result);
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
    let (result, code) = loadgen::overhead::run_overhead(args, command)?;
    let out = result.plan.out.clone();
    if let Some(path) = out {
        write_json(&result, &path)?;
    }
    show(&loadgen::report::overhead::terminal(&result));
    Ok(code)
}

fn report_command(args: ReportArgs) -> anyhow::Result<u8> {
    let text = loadgen::report::render::render(&args.result, args.format)?;
    match args.out {
        Some(path) => write_atomically(&path, text.as_bytes())?,
        None => show(&text),
    }
    Ok(loadgen::run::EXIT_OK)
}

fn merge_command(args: loadgen::merge::MergeArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let merged = loadgen::merge::run_merge(&args, command)?;
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
        loadgen::run::EXIT_OK
    } else {
        loadgen::run::EXIT_FAILED
    })
}

fn compare_command(
    args: loadgen::compare::CompareArgs,
    command: Vec<String>,
) -> anyhow::Result<u8> {
    let (result, code) = loadgen::compare::run_compare(args, command)?;
    if let Some(path) = &result.plan.out {
        write_json(&result, path)?;
    }
    show(&loadgen::report::compare::terminal(&result));
    Ok(code)
}

fn sweep_command(args: loadgen::sweep::SweepArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = loadgen::sweep::run_sweep(args, command)?;
    if let Some(path) = &result.plan.out {
        write_json(&result, path)?;
    }
    show(&loadgen::report::sweep::terminal(&result));
    Ok(code)
}

fn ladder_command(args: loadgen::ladder::LadderArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = loadgen::ladder::run_ladder(args, command)?;
    if let Some(path) = &result.plan.out {
        write_json(&result, path)?;
    }
    show(&loadgen::report::ladder::terminal(&result));
    Ok(code)
}

/// Prints a report to stdout. A reader that went away (`| head`) is not an error: the result
/// files are already written by then.
fn show(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(text.as_bytes());
}
