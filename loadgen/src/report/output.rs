//! Writing result files: whole or not at all, so a reader (or an interrupted run) never sees
//! half a file. One writer for every result kind's JSON, and the HdrHistogram files of a run.

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
