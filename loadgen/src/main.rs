//! The `loadgen` binary: parses the command line and hands it to `loadgen::commands`.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not glibc's malloc: chosen when the HTTP/2 client was the `h2` crate, which
/// allocated for every stream (glibc's `malloc` and `free` were about a tenth of a request's
/// instructions, BENCHMARKS.md). The clients of today allocate little per request (rustls's
/// record buffers over TLS); it stays, as the schedule lag measured no worse with it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    loadgen::options::former_environment();
    ExitCode::from(loadgen::commands::execute(loadgen::Cli::parse()))
}
