//! `loadgen ladder`'s rungs table and terminal report.

use super::overhead::micros;
use super::table::Table;
use crate::results::ladder::{LadderResult, Rung};

/// Per level and target: streams completed and failed, TTFT and e2e, chunks, delivery.
pub fn rungs_table(rungs: &[Rung]) -> Table {
    let mut table = Table::new(&[
        "streams",
        "target",
        "completed",
        "failed",
        "TTFT p50",
        "TTFT p95",
        "e2e p50",
        "e2e p95",
        "chunks",
        "delivery",
        "errors",
    ]);
    for r in rungs {
        table.push(vec![
            r.level.to_string(),
            r.name.to_string(),
            r.completed.to_string(),
            r.failed.to_string(),
            micros(r.ttft_p50_us),
            micros(r.ttft_p95_us),
            micros(r.e2e_p50_us),
            micros(r.e2e_p95_us),
            if r.chunks_p50.is_finite() {
                format!("{}", r.chunks_p50)
            } else {
                "-".to_string()
            },
            r.delivery.clone(),
            if r.errors.is_empty() {
                "-".into()
            } else {
                r.errors
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ]);
    }
    table
}

/// The terminal report.
pub fn terminal(result: &LadderResult) -> String {
    let mut out = format!(
        "loadgen ladder: N streams started at one instant per level and target; times from that instant ({})\n\n",
        result.plan.request.scenario
    );
    out.push_str(&rungs_table(&result.rungs).to_text());
    out.push_str(&super::terminal::closing(
        &result.resources,
        result.valid,
        &result.invalid_reasons,
    ));
    out
}
