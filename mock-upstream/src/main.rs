use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = mock_upstream::Cli::parse();
    match mock_upstream::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mock-upstream: {err:#}");
            ExitCode::from(2)
        }
    }
}
