//! perf, the on-CPU and off-CPU profiler: whether it may sample a process here (and which
//! setting stands in the way when it may not), the recordings of one session, and the stacks
//! folded from them.
//!
//! - `program`: running `perf record` and `perf script`, and the checks before it.
//! - `session`: perf started and stopped at each profiled run's measured window.
//! - `fold`: folded stacks, on-CPU (inferno) and off-CPU (the scheduler's switches).

pub mod fold;
mod program;
mod session;

use std::path::{Path, PathBuf};

use crate::engine::run::SetupError;
use crate::options::CallGraph;

pub use program::Perf;
pub use session::{Session, Settings};

/// perf, when it may sample `pid` here, and whether off-CPU sampling may be on too; each
/// reason it may not is said, and returned for the result.
pub fn perf_at_hand(
    program: &Path,
    pid: u32,
    call_graph: CallGraph,
    off_cpu: bool,
    dir: &Path,
) -> (Option<Perf>, bool, Vec<String>) {
    let mut unavailable = Vec::new();
    let perf = match Perf::check(program, pid, call_graph, dir) {
        Ok(perf) => Some(perf),
        Err(reason) => {
            unavailable.push(format!("no profile: {reason}"));
            None
        }
    };
    let mut off_cpu = off_cpu;
    if let (Some(perf), true) = (&perf, off_cpu) {
        if let Err(reason) = perf.check_off_cpu(pid, dir) {
            unavailable.push(format!("no off-CPU profile: {reason}"));
            off_cpu = false;
        }
    }
    for reason in &unavailable {
        gatebench_shared::say!("loadgen: {reason}; the load still runs and is reported");
    }
    (perf, off_cpu, unavailable)
}

/// A fresh directory for perf's recordings.
pub fn scratch_dir() -> anyhow::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir =
        std::env::temp_dir().join(format!("gatebench-profile-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| SetupError::Other(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}
