use std::process::ExitCode;

use clap::Parser;
use loadgen::cli::ReportArgs;
use loadgen::overhead::plan::OverheadArgs;
use loadgen::run::{run, write_hgrm, write_json, EXIT_USAGE};
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
    let (out, hgrm) = (result.plan.out.clone(), result.plan.hgrm.clone());
    if let Some(path) = out {
        write_json(&result, &path)?;
    }
    if let Some(dir) = hgrm {
        write_hgrm(&result, &dir)?;
    }
    show(&loadgen::report::terminal::summary(&result));
    Ok(code)
}

fn overhead_command(args: OverheadArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = loadgen::overhead::run_overhead(args, command)?;
    let out = result.plan.out.clone();
    if let Some(path) = out {
        loadgen::overhead::write_json(&result, &path)?;
    }
    show(&loadgen::report::overhead::terminal(&result));
    Ok(code)
}

fn report_command(args: ReportArgs) -> anyhow::Result<u8> {
    let text = loadgen::report::render::render(&args.result, args.format)?;
    match args.out {
        Some(path) => loadgen::run::write_atomically(&path, text.as_bytes())?,
        None => show(&text),
    }
    Ok(loadgen::run::EXIT_OK)
}

fn compare_command(
    args: loadgen::compare::CompareArgs,
    command: Vec<String>,
) -> anyhow::Result<u8> {
    let (result, code) = loadgen::compare::run_compare(args, command)?;
    if let Some(path) = &result.plan.out {
        loadgen::compare::write_json(&result, path)?;
    }
    show(&loadgen::compare::terminal(&result));
    Ok(code)
}

fn sweep_command(args: loadgen::sweep::SweepArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = loadgen::sweep::run_sweep(args, command)?;
    if let Some(path) = &result.plan.out {
        loadgen::sweep::write_json(&result, path)?;
    }
    show(&loadgen::sweep::terminal(&result));
    Ok(code)
}

fn ladder_command(args: loadgen::ladder::LadderArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = loadgen::ladder::run_ladder(args, command)?;
    if let Some(path) = &result.plan.out {
        loadgen::ladder::write_json(&result, path)?;
    }
    show(&loadgen::ladder::terminal(&result));
    Ok(code)
}

/// Prints a report to stdout. A reader that went away (`| head`) is not an error: the result
/// files are already written by then.
fn show(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(text.as_bytes());
}
