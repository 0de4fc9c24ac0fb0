//! A `loadgen compare` result (schema `gatebench.loadgen.compare/1`) as tables, the terminal
//! report, CSV and Markdown.

use super::disclosure::Disclosure;
use super::format::{micros, resolution, signed};
use super::table::Table;
use crate::model::load::Load;
use crate::results::compare::CompareResult;
use crate::results::compare::{PercentileDelta, TargetSummary};
use crate::results::metric::Summary;
use crate::results::plan::PlanRecord;

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
        result.header.trials,
        load_line(&result.header.plan)
    );
    out.push_str(&summary_table(&result.summary).to_text());
    out.push('\n');
    out.push_str(&delta_table(&result.deltas).to_text());
    if !result.turn_deltas.is_empty() {
        out.push_str("\nAdded per turn of the conversations (median of each trial's turn):\n");
        out.push_str(&delta_table(&result.turn_deltas).to_text());
    }
    out.push_str(if result.header.twin {
        "\nVerdicts against the twin (trials of its own): a gateway differs only beyond the \
         twin's interval at that percentile; Holm over every row.\n"
    } else {
        "\nNo twin: verdicts against zero, widened by --min-effect; Holm over every row.\n"
    });
    out.push_str(&format!("{}\n", source(result)));
    out.push_str(&super::terminal::closing(
        &result.footer.resources,
        result.footer.valid,
        &result.footer.invalid_reasons,
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

/// One row per trial and target, numbers only (times in µs), for spreadsheets.
pub fn trials_csv(view: &CompareResult) -> String {
    let mut table = Table::new(&[
        "trial",
        "target",
        "requests",
        "ok",
        "failed",
        "achieved_rate",
        "throughput",
        "p50_us",
        "p90_us",
        "p99_us",
        "p999_us",
        "max_us",
        "valid",
    ]);
    for r in &view.runs {
        let rt = r.run.metrics.get("response_time");
        let p = |f: fn(&Summary) -> u64| rt.map_or_else(String::new, |m| f(m).to_string());
        table.push(vec![
            r.trial.to_string(),
            r.name.to_string(),
            r.run.requests.to_string(),
            r.run.ok.to_string(),
            r.run.failed.to_string(),
            format!("{:.3}", r.run.achieved_rate),
            format!("{:.3}", r.run.throughput),
            p(|m| m.p50),
            p(|m| m.p90),
            p(|m| m.p99),
            p(|m| m.p999),
            p(|m| m.max),
            r.run.validity.valid.to_string(),
        ]);
    }
    table.to_csv()
}

/// How the resolution was obtained, in one sentence.
pub fn source(view: &CompareResult) -> String {
    super::format::resolution_from(
        &view.header.resolution_source,
        &view.header.targets,
        view.header.twin,
    )
}

/// How the verdicts are reached, in one paragraph.
pub fn method(view: &CompareResult) -> String {
    let control = if view.header.twin {
        let twin = crate::model::target::twin_info(&view.header.targets);
        format!(
            "against the twin ({twin}), an A/A control with trials of its own, by Welch's t test \
             at the same percentile; the resolution is the farthest end of the twin's interval \
             from zero"
        )
    } else {
        "against zero (no twin)".to_string()
    };
    let floor = if view.header.min_effect_us > 0.0 {
        format!(
            ", at least --min-effect {}",
            crate::report::format::micros(view.header.min_effect_us)
        )
    } else {
        String::new()
    };
    format!(
        "Added latency is the mean over trials of gateway − direct at each percentile, with a 95% \
         t interval across trials, compared {control}{floor}. The p-values of every gateway and \
         percentile are adjusted together (Holm). A gateway 'adds latency' or is 'faster than \
         direct' only when the adjusted test says so and its interval lies beyond the resolution \
         on that side; otherwise it is within the resolution."
    )
}

/// A Markdown write-up: the seven-gateway table, the added latency per percentile, disclosure.
pub fn markdown(view: &CompareResult) -> String {
    let mut out = format!(
        "# Gateway comparison under load\n\n{} alternating trial(s) per target (direct, then each gateway, repeated). Response times are corrected for coordinated omission. {}\n\n",
        view.header.trials,
        method(view)
    );
    out.push_str(&summary_table(&view.summary).to_markdown());
    out.push_str("\n## Added latency\n\n");
    out.push_str(&delta_table(&view.deltas).to_markdown());
    if !view.turn_deltas.is_empty() {
        out.push_str("\n## Added per turn of the conversations\n\n");
        out.push_str(&delta_table(&view.turn_deltas).to_markdown());
    }
    out.push_str(&format!("\n{}\n", source(view)));
    if !view.footer.resources.is_empty() {
        out.push_str("\n## Sampled processes (`--sample-pid`)\n\n");
        out.push_str(&crate::report::resources::table(&view.footer.resources).to_markdown());
    }
    out.push_str(
        &Disclosure {
            targets: &view.header.targets,
            verdict: Some((view.footer.valid, &view.footer.invalid_reasons)),
            mock: view.header.mock.as_deref(),
            ..Disclosure::of(&view.envelope)
        }
        .markdown(),
    );
    out
}
