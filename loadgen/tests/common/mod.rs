//! What the binary's tests share: the binary (without a profile from the environment), a fresh
//! directory of their own, a result file read back, and whether this run judges the machine's
//! precision too.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `loadgen` binary, ignoring any preset the environment names (`LOADGEN_PRESET`, or `LOADGEN_PROFILE` as it was called).
pub fn loadgen() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loadgen"));
    cmd.env_remove("LOADGEN_PRESET")
        .env_remove("LOADGEN_PROFILE");
    cmd
}

/// An empty directory named after the test and this process.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loadgen-tests-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A JSON file, parsed.
pub fn read_result(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Whether this run judges the machine's precision too: `GATEBENCH_PRECISION=1`, which
/// `scripts/precision.sh` sets (as `gatebench_tests::precision_run` reads it for the end-to-end
/// tests). `scripts/test.sh` asserts only what the code decides and what physics guarantees
/// (counts, bytes, structure, never early, done within seconds), so a busy host cannot fail
/// it; with this set, rates achieved and clock errors are held to their tight bounds as well.
pub fn precision_run() -> bool {
    std::env::var_os("GATEBENCH_PRECISION").is_some_and(|v| v != "0")
}
