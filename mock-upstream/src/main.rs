//! The `mock-upstream` binary: parses the command line and hands it to `mock_upstream::run`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    mock_upstream::former_environment();
    let cli = mock_upstream::Cli::parse();
    match mock_upstream::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let err: &(dyn std::error::Error + 'static) = err.as_ref();
            gatebench_shared::say!("mock-upstream: {}", gatebench_shared::errors::one_line(err));
            ExitCode::from(2)
        }
    }
}
