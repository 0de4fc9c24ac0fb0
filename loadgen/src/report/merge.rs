//! `loadgen merge`'s report: the merged run's, then every metric of it.

use super::table::Table;
use crate::results::run::RunResult;

/// The merged result's report in Markdown: the run's, then every metric of it.
pub fn markdown(merged: &RunResult) -> String {
    let mut report = super::run::markdown(merged);
    if let Some(run) = merged.runs.first() {
        report.push_str(&metrics_markdown(run));
    }
    report
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
