//! Writing result files: whole or not at all, so a reader (or an interrupted run) never sees
//! half a file. One writer for every result kind's JSON.

use anyhow::Context as _;
use serde::Serialize;

/// Writes `bytes` to a temporary file beside `path`, then renames it into place.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes a result (`run`, `overhead`, `compare`, `sweep`, `ladder`) as pretty JSON, atomically.
pub fn write_json<T: Serialize>(result: &T, path: &std::path::Path) -> anyhow::Result<()> {
    let text = serde_json::to_vec_pretty(result).context("cannot encode the result")?;
    write_atomically(path, &text)
}
