use std::process::ExitCode;

use clap::Parser;
use loadgen::run::{run, write_hgrm, write_json, EXIT_USAGE};
use loadgen::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Run(args) = cli.command;
    let (out, hgrm) = (args.out.clone(), args.hgrm.clone());
    let result = run(args, std::env::args().collect());
    let (result, code) = match result {
        Ok(done) => done,
        Err(err) => {
            eprintln!("loadgen: {err:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    print!("{}", loadgen::report::terminal::summary(&result));
    let written = out
        .map(|path| write_json(&result, &path))
        .transpose()
        .and_then(|_| hgrm.map(|dir| write_hgrm(&result, &dir)).transpose());
    if let Err(err) = written {
        eprintln!("loadgen: {err:#}");
        return ExitCode::from(EXIT_USAGE);
    }
    ExitCode::from(code)
}
