//! `loadgen merge`'s report: the merged run's, then every metric of it.

use super::table::Table;
use crate::results::capacity::Judged;
use crate::results::run::RunResult;
use crate::results::shards::AbsentShard;

/// The merged result's report in Markdown: the run's, then every metric of it.
pub fn markdown(merged: &RunResult) -> String {
    let mut report = super::run::markdown(merged);
    if let Some(run) = merged.runs.first() {
        report.push_str(&metrics_markdown(run));
    }
    if let Some(shards) = merged.shards.as_ref().filter(|s| !s.thresholds.is_empty()) {
        report.push_str(&thresholds_markdown(&shards.thresholds));
    }
    if let Some(shards) = merged.shards.as_ref().filter(|s| !s.absent.is_empty()) {
        report.push_str(&absent_markdown(&shards.absent));
    }
    report
}

/// The shards the merge has no result of, and why.
fn absent_markdown(absent: &[AbsentShard]) -> String {
    let mut table = Table::new(&["shard", "why"]);
    for shard in absent {
        table.push(vec![shard.index.to_string(), shard.why.clone()]);
    }
    format!(
        "\n## Shards not merged\n\nThe merged run is not the plan's load without them.\n\n{}",
        table.to_markdown()
    )
}

/// Each threshold, what the merged run measured, and whether it was met.
fn thresholds_markdown(judged: &[Judged]) -> String {
    let mut table = Table::new(&["threshold", "measured", "met"]);
    for j in judged {
        let measured = if j.value.is_finite() {
            format!("{}", j.value)
        } else {
            "not recorded".to_string()
        };
        let met = if j.met { "yes" } else { "**no**" };
        table.push(vec![j.objective.clone(), measured, met.to_string()]);
    }
    format!(
        "\n## Thresholds on the merged run\n\nTimes in µs, errors as a share.\n\n{}",
        table.to_markdown()
    )
}

/// Every metric of the merged run: count and percentiles (times in µs).
fn metrics_markdown(run: &crate::results::run::TargetRun) -> String {
    let mut table = Table::new(&["metric", "count", "p50", "p90", "p99", "p99.9", "max"]);
    for (metric, s) in &run.metrics {
        let mut row = vec![metric.clone()];
        for v in [s.count, s.p50, s.p90, s.p99, s.p999, s.max] {
            row.push(v.to_string());
        }
        table.push(row);
    }
    format!(
        "\n## Every metric of the merged run\n\nTimes in µs (counts for output_*).\n\n{}",
        table.to_markdown()
    )
}
