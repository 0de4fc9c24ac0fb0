//! Checks made before any load is sent, each refusing with a [`SetupError`] (exit 2): a target
//! that cannot be reached at all, and connections that need more descriptors than the limit.

use std::time::Duration;

use gatebench_shared::host::OpenFileLimit;

use super::exit::SetupError;
use crate::generator::plan::Plan;
use crate::model::load::Load;
use crate::model::target::Target;

/// Descriptors kept free for everything but the connections (standard streams, the runtime,
/// files written, a probe of the target).
const SPARE_FILES: u64 = 64;

/// Refuses a target that cannot be reached at all before any load is sent (exit 2); failures
/// during the run are counted per request instead.
pub(crate) fn probe(target: &Target, timeout: Duration) -> Result<(), SetupError> {
    std::net::TcpStream::connect_timeout(&target.resolved, timeout.min(Duration::from_secs(5)))
        .map(drop)
        .map_err(|e| {
            SetupError::Other(format!(
                "cannot connect to target {} ({}): {e}",
                target.url, target.resolved
            ))
        })
}

/// Refuses a plan whose connections need more descriptors than the limit allows, even raised.
pub(crate) fn check_open_files(
    plan: &Plan,
    files: Option<&OpenFileLimit>,
) -> Result<(), SetupError> {
    let connections = match plan.load {
        Load::Closed { concurrency } => concurrency.max(plan.connections),
        Load::Open { .. } => plan.connections,
    };
    check_connections(connections, files)
}

/// Refuses `connections` open at once when they need more descriptors than the limit allows.
pub(crate) fn check_connections(
    connections: usize,
    files: Option<&OpenFileLimit>,
) -> Result<(), SetupError> {
    let connections = connections as u64;
    match files {
        Some(files) if connections + SPARE_FILES > files.soft => Err(SetupError::Other(format!(
            "impossible plan: {connections} connections need about {} open files; the limit \
             here is {} even after raising it (ulimit -n; the hard limit is {})",
            connections + SPARE_FILES,
            files.soft,
            files.hard
        ))),
        _ => Ok(()),
    }
}
