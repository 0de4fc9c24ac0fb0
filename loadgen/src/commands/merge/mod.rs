//! `loadgen merge`: the results (or the interval logs) of the shards of one plan, added into one.
//!
//! Histograms are added, never averaged, so the merged percentiles are those of one process
//! that recorded every request. Shards of different plans are refused, naming what differs.

mod absent;
mod check;
mod clocks;
mod command;
pub mod logs;
mod runs;
mod thresholds;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use serde_json::Value;

use crate::options::MergeArgs;

pub use absent::Absent;
pub use check::MergeError;
pub use thresholds::Thresholds;

/// What `loadgen merge` made: a result (JSON) or an interval log (text), and its report.
#[derive(Debug)]
pub struct Merged {
    pub output: String,
    pub report: String,
    pub valid: bool,
    /// The thresholds the merged run failed, as said on stderr.
    pub failed: Vec<String>,
}

/// Merges the inputs: results when they are JSON, interval logs otherwise.
pub fn run_merge(args: &MergeArgs, command: Vec<String>) -> anyhow::Result<Merged> {
    let mut texts = Vec::new();
    for path in &args.inputs {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        texts.push((path.clone(), bytes));
    }
    let results: Vec<Option<Value>> = texts.iter().map(|(_, b)| result_in(b)).collect();
    match results.iter().filter(|r| r.is_some()).count() {
        0 => {
            if args.max_p99.is_some() || args.max_error_rate.is_some() || args.slo.is_some() {
                bail!("thresholds judge results, not interval logs: merge the results");
            }
            logs::merge(&texts)
        }
        n if n == texts.len() => {
            let shards = texts
                .into_iter()
                .zip(results)
                .filter_map(|((path, _), r)| r.map(|r| (path, r)))
                .collect();
            merge_results(
                shards,
                args.partial,
                &Thresholds::from_args(args)?,
                &Absent::parse(&args.absent)?,
                command,
            )
        }
        _ => bail!("cannot merge JSON results with interval logs: give one kind"),
    }
}

/// The result in a file: the whole file, or the one line of a log that holds it (`loadgen run
/// --out -` in a container, its log read back with `kubectl logs`, the report beside it).
fn result_in(bytes: &[u8]) -> Option<Value> {
    if let Ok(value @ Value::Object(_)) = serde_json::from_slice(bytes) {
        return Some(value);
    }
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| l.starts_with("{\"schema\":"))
        .find_map(|l| serde_json::from_str(l).ok())
}

/// Merges shard results (file, parsed JSON) into one result of the whole plan, judged by
/// `thresholds`, listing the shards it has no result of with the reasons in `absent`.
pub fn merge_results(
    shards: Vec<(PathBuf, Value)>,
    partial: bool,
    thresholds: &Thresholds,
    absent: &Absent,
    command: Vec<String>,
) -> anyhow::Result<Merged> {
    let shards = check::shards(shards, partial)?;
    let merged_indexes: Vec<u64> = shards.iter().map(|s| s.index).collect();
    let absent = absent.list(shards[0].count, &merged_indexes)?;
    let mut merged = runs::merged_result(&shards, command)?;
    let judged = thresholds.judge(&merged);
    let failed = judged
        .iter()
        .filter(|j| !j.met)
        .map(|j| format!("{}: the merged run measured {}", j.objective, j.value))
        .collect();
    if let Some(listed) = &mut merged.shards {
        listed.thresholds = judged;
        listed.absent = absent;
    }
    Ok(Merged {
        output: serde_json::to_string_pretty(&merged)? + "\n",
        report: crate::report::merge::markdown(&merged),
        valid: merged.valid,
        failed,
    })
}

/// A shard's file name for messages.
fn name(path: &Path) -> String {
    path.display().to_string()
}
