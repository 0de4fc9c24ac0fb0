//! `loadgen merge`'s report: the merged run's, then every metric of it.

use anyhow::Context as _;
use serde_json::Value;

use super::table::Table;

/// The merged result's report in Markdown: the run's, then every metric of it.
pub fn markdown(merged: &Value) -> anyhow::Result<String> {
    let view: super::run_view::RunView =
        serde_json::from_value(merged.clone()).context("the merged result does not read back")?;
    let mut report = super::run_view::markdown(&view);
    report.push_str(&metrics_markdown(&merged["runs"][0]["metrics"]));
    Ok(report)
}

/// Every metric of the merged run: count and percentiles (times in µs).
fn metrics_markdown(metrics: &Value) -> String {
    let mut table = Table::new(&["metric", "count", "p50", "p90", "p99", "p99.9", "max"]);
    for (metric, s) in metrics.as_object().into_iter().flatten() {
        let mut row = vec![metric.clone()];
        for field in ["count", "p50", "p90", "p99", "p999", "max"] {
            row.push(
                s[field]
                    .as_u64()
                    .map_or_else(|| "-".into(), |v| v.to_string()),
            );
        }
        table.push(row);
    }
    format!(
        "\n## Every metric of the merged run\n\nTimes in µs (counts for output_*).\n\n{}",
        table.to_markdown()
    )
}
