//! The toolkit every command that measures targets shares (`loadgen run` itself is
//! `commands::run`): running one target and its measured window (`target`, `watch`,
//! `summary`), the stop on Ctrl-C (`stop`), the exit codes and setup errors (`exit`), and the
//! checks made before any load is sent (`preflight`).

mod exit;
mod preflight;
mod sessions;
#[cfg(test)]
pub(crate) mod simulated;
mod stop;
mod summary;
mod target;
mod watch;

pub use exit::{SetupError, EXIT_FAILED, EXIT_HOST, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};
pub(crate) use preflight::{check_connections, check_open_files, probe};
pub(crate) use stop::{stop_flag, stop_requested};
pub(crate) use target::{run_target, run_target_watched};
pub(crate) use watch::Window;
