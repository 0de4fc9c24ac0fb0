//! A `loadgen ladder` result (schema `gatebench.loadgen.ladder/1`) as its rungs table, terminal
//! report, CSV and Markdown.

use super::format::micros;
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
        &result.footer.resources,
        result.footer.valid,
        &result.footer.invalid_reasons,
    ));
    out
}

/// A Markdown write-up: the rungs, the disclosure.
pub fn ladder_markdown(view: &LadderResult) -> String {
    let mut out = String::from("# Simultaneous streams (ladder)\n\nAt each level, N streams start at one instant; times are from that instant. `delivery` compares each gateway with the direct streams of the same level: output events per stream (re-chunked) and the spread from first to last output (buffered).\n\n");
    out.push_str(&rungs_table(&view.rungs).to_markdown());
    out.push_str(&super::sweep::disclosure(
        &view.envelope,
        &view.targets,
        (view.footer.valid, &view.footer.invalid_reasons),
        view.mock.as_deref(),
        &view.footer.resources,
    ));
    out
}

/// Numbers only: one row per level and target.
pub fn ladder_csv(view: &LadderResult) -> String {
    let mut table = Table::new(&[
        "streams",
        "target",
        "completed",
        "failed",
        "ttft_p50_us",
        "ttft_p95_us",
        "e2e_p50_us",
        "e2e_p95_us",
        "chunks_p50",
        "spread_p50_us",
        "delivery",
    ]);
    for r in &view.rungs {
        table.push(vec![
            r.level.to_string(),
            r.name.to_string(),
            r.completed.to_string(),
            r.failed.to_string(),
            format!("{:.1}", r.ttft_p50_us),
            format!("{:.1}", r.ttft_p95_us),
            format!("{:.1}", r.e2e_p50_us),
            format!("{:.1}", r.e2e_p95_us),
            r.chunks_p50.to_string(),
            format!("{:.1}", r.spread_p50_us),
            r.delivery.clone(),
        ]);
    }
    table.to_csv()
}
