//! The `loadgen` binary: parses the command line and hands it to `loadgen::commands`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ExitCode::from(loadgen::commands::execute(loadgen::Cli::parse()))
}
