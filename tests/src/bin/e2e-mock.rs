//! `mock-upstream` as a binary of this crate, so the end-to-end tests have its path
//! (`CARGO_BIN_EXE_e2e-mock`) to hand to loadgen, which starts it as its twin. The same `main`
//! as the mock's.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    mock_upstream::former_environment();
    match mock_upstream::run(mock_upstream::Cli::parse()) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("mock-upstream: {err:#}");
            ExitCode::from(2)
        }
    }
}
