use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ExitCode::from(loadgen::commands::execute(loadgen::Cli::parse()))
}
