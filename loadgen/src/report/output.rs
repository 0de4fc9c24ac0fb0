//! Writing result files: whole or not at all, so a reader (or an interrupted run) never sees
//! half a file. One writer for every result kind's JSON, and the HdrHistogram files of a run.

use anyhow::Context as _;
use serde::Serialize;

/// Writes `bytes` to a temporary file beside `path`, then renames it into place. A path that
/// names a device, a pipe or a socket (`/dev/null`, `/dev/stdout`, a FIFO) is written to as it
/// is: renamed over, it would be replaced by a plain file, and `/dev/null` with it for root. A
/// link is followed: the file it names is replaced and the link kept.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let existing = std::fs::metadata(path).ok();
    if existing
        .as_ref()
        .is_some_and(|m| !m.is_file() && !m.is_dir())
    {
        return std::fs::write(path, bytes)
            .with_context(|| format!("cannot write {}", path.display()));
    }
    let target = match existing {
        Some(_) => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        None => path.to_path_buf(),
    };
    let tmp = target.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &target).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes a result (`run`, `overhead`, `compare`, `sweep`, `ladder`) as pretty JSON, atomically.
pub fn write_json<T: Serialize>(result: &T, path: &std::path::Path) -> anyhow::Result<()> {
    let text = serde_json::to_vec_pretty(result).context("cannot encode the result")?;
    write_atomically(path, &text)
}

/// Writes one `.hgrm` file per metric of every run into `dir`, named
/// `RUN-SCENARIO.METRIC.hgrm` (RUN counts from 1).
pub fn write_hgrm(
    result: &crate::results::run::RunResult,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (i, run) in result.runs.iter().enumerate() {
        for (metric, h) in &run.histograms {
            let path = dir.join(format!("{}-{}.{}.hgrm", i + 1, run.scenario, metric.name()));
            std::fs::write(&path, crate::report::hgrm::percentile_distribution(h))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

/// Writes one HdrHistogram interval log per metric of every run into `dir`, named
/// `RUN-SCENARIO.METRIC.hlog` (RUN counts from 1).
pub fn write_hdr_log(
    result: &crate::results::run::RunResult,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let warmup_us = result.plan.warmup_us as i64;
    for (i, run) in result.runs.iter().enumerate() {
        for (metric, series) in run.per_second.iter().flatten() {
            let header = crate::report::hlog::LogHeader {
                metric: metric.name(),
                about: format!(
                    "{} {}, shard {}",
                    run.target.url, run.scenario, result.plan.shard
                ),
                base_unix_us: run.clock.started_unix_us + warmup_us,
                time: metric.is_time(),
            };
            let path = dir.join(crate::report::hlog::file_name(
                i + 1,
                &run.scenario,
                *metric,
            ));
            write_atomically(
                &path,
                crate::report::hlog::interval_log(&header, series).as_bytes(),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("loadgen-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_device_is_written_to_and_never_replaced() {
        write_atomically(std::path::Path::new("/dev/null"), b"{}").unwrap();
        let kind = std::fs::symlink_metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null is still the device");
    }

    #[test]
    fn a_file_is_replaced_whole_and_a_link_keeps_naming_it() {
        let dir = scratch("link");
        let file = dir.join("result.json");
        std::fs::write(&file, b"old").unwrap();
        let link = dir.join("latest.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        let fresh = dir.join("fresh.json");
        write_atomically(&fresh, b"first").unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"first");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 3, "no temporary file left: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
