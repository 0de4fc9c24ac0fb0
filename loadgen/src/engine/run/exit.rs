//! How a command ends: the documented exit codes, and the setup error that earns exit 2.

use crate::generator::plan_error::PlanError;

/// Exit codes, as documented in docs/loadgen-run.md.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
/// `loadgen selftest`: this machine cannot measure at gatebench's targets now (its timer or
/// its neighbours, not the code); the result names each figure that missed.
pub const EXIT_HOST: u8 = 3;
/// A run with a planned end stopped early by Ctrl-C or SIGTERM (its partial result is written).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A user error (exit 2), as opposed to a run that was judged (exit 0 or 1).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("{0}")]
    Other(String),
}
