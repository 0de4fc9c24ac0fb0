//! `loadgen compare`'s tables and terminal report.

use super::overhead::{micros, resolution, signed};
use super::table::Table;
use crate::results::compare::CompareResult;
use crate::results::compare::{PercentileDelta, TargetSummary};
use crate::results::plan::{Load, PlanRecord};

/// requests, throughput, success, P50, P99, P99.9 per target.
pub fn summary_table(summaries: &[TargetSummary]) -> Table {
    let mut table = Table::new(&[
        "target",
        "trials",
        "requests",
        "throughput (req/s)",
        "success",
        "P50",
        "P99",
        "P99.9",
    ]);
    for s in summaries {
        let mut row = vec![s.name.to_string(), s.trials.to_string()];
        row.extend(published_cells(s));
        table.push(row);
    }
    table
}

/// A target's cells in the published table's columns: requests, throughput, success, P50,
/// P99, P99.9.
pub fn published_cells(s: &TargetSummary) -> Vec<String> {
    vec![
        s.requests.to_string(),
        format!("{:.1}", s.throughput),
        format!("{:.2}%", s.success_rate * 100.0),
        micros(s.p50_us),
        micros(s.p99_us),
        micros(s.p999_us),
    ]
}

/// Per gateway and percentile: the added latency across trials.
pub fn delta_table(deltas: &[PercentileDelta]) -> Table {
    let mut table = Table::new(&[
        "gateway",
        "percentile",
        "trials",
        "added (mean)",
        "95% interval",
        "resolution",
        "verdict",
    ]);
    for d in deltas {
        table.push(vec![
            d.gateway.to_string(),
            d.percentile.clone(),
            d.per_trial_us.len().to_string(),
            d.added_us
                .map_or_else(|| "-".into(), |i| signed(i.estimate)),
            d.added_us.map_or_else(
                || "-".into(),
                |i| format!("[{}, {}]", signed(i.low), signed(i.high)),
            ),
            resolution(d.resolution_us),
            d.verdict(),
        ]);
    }
    table
}

/// The terminal report: the summary table, then the delta table.
pub fn terminal(result: &CompareResult) -> String {
    let mut out = format!(
        "loadgen compare: {} trial(s) per target, alternating; each trial: {}\n\n",
        result.trials,
        load_line(&result.plan)
    );
    out.push_str(&summary_table(&result.summary).to_text());
    out.push('\n');
    out.push_str(&delta_table(&result.deltas).to_text());
    out.push_str(if result.twin {
        "\nVerdicts against the twin (the direct URL or --twin, trials of its own): a gateway \
         differs only beyond the twin's interval at that percentile; Holm over every row.\n"
    } else {
        "\nNo twin (--twin none): verdicts against zero, widened by --min-effect; Holm over \
         every row.\n"
    });
    out.push_str(&super::terminal::closing(
        &result.resources,
        result.valid,
        &result.invalid_reasons,
    ));
    out
}

fn load_line(plan: &PlanRecord) -> String {
    let us = std::time::Duration::from_micros;
    let load = match plan.load {
        Load::Open { rate, .. } => format!("{rate} req/s open loop"),
        Load::Closed { concurrency } => {
            format!("{concurrency} in flight (closed loop)")
        }
    };
    let duration = plan.duration_us.map_or_else(
        || "forever".into(),
        |d| humantime::format_duration(us(d)).to_string(),
    );
    format!(
        "{load} for {duration}, {} warm-up, scenario {}",
        humantime::format_duration(us(plan.warmup_us)),
        plan.request.scenario
    )
}
