use std::process::ExitCode;

use clap::Parser;
use loadgen::overhead::plan::OverheadArgs;
use loadgen::run::{run, write_hgrm, write_json, EXIT_USAGE};
use loadgen::{Cli, Command, RunArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = std::env::args().collect();
    let code = match cli.command {
        Command::Run(args) => run_command(args, command),
        Command::Overhead(args) => overhead_command(args, command),
    };
    match code {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("loadgen: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn run_command(args: RunArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = run(args, command)?;
    // From the flags or the profile.
    let (out, hgrm) = (result.plan.out.clone(), result.plan.hgrm.clone());
    print!("{}", loadgen::report::terminal::summary(&result));
    if let Some(path) = out {
        write_json(&result, &path)?;
    }
    if let Some(dir) = hgrm {
        write_hgrm(&result, &dir)?;
    }
    Ok(code)
}

fn overhead_command(args: OverheadArgs, command: Vec<String>) -> anyhow::Result<u8> {
    let (result, code) = loadgen::overhead::run_overhead(args, command)?;
    let out = result.plan.out.clone();
    print!("{}", loadgen::report::overhead::terminal(&result));
    if let Some(path) = out {
        loadgen::overhead::write_json(&result, &path)?;
    }
    Ok(code)
}
