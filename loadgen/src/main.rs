//! The `loadgen` binary: parses the command line and hands it to `loadgen::commands`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    loadgen::options::former_environment();
    ExitCode::from(loadgen::commands::execute(loadgen::Cli::parse()))
}
