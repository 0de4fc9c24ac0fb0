//! `loadgen` as a binary of this crate, so the end-to-end tests can run it as a process of its
//! own, with an environment of its own (`CARGO_BIN_EXE_e2e-loadgen`; another package's binary
//! has no such path). The same `main` and allocator as loadgen's.

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    loadgen::options::former_environment();
    ExitCode::from(loadgen::commands::execute(loadgen::Cli::parse()))
}
