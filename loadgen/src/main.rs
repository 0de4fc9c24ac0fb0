//! The `loadgen` binary: parses the command line and hands it to `loadgen::commands`.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not glibc's malloc: over HTTP/2 the `h2` crate and `http`'s header maps allocate
/// for every stream, and glibc's `malloc` and `free` were about a tenth of a request's
/// instructions there (BENCHMARKS.md). The HTTP/1.1 path allocates nothing per request.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    loadgen::options::former_environment();
    ExitCode::from(loadgen::commands::execute(loadgen::Cli::parse()))
}
