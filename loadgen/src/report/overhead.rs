//! Reports of `loadgen overhead`: the per-target table and the delta table, as text, Markdown
//! or CSV.

use crate::results::overhead::OverheadResult;

use super::disclosure::Disclosure;
use super::table::Table;

use super::format::{micros, resolution, signed};

/// Per trial and target: calls, failures, connection reuse, end-to-end and TTFT percentiles.
pub fn targets_table(result: &OverheadResult) -> Table {
    let mut table = Table::new(&[
        "target", "scenario", "trial", "calls", "failed", "conns", "e2e p50", "e2e p90", "e2e p99",
        "ttft p50",
    ]);
    for trial in &result.trials {
        for t in &trial.targets {
            table.push(vec![
                t.name.to_string(),
                trial.scenario.clone(),
                trial.trial.to_string(),
                t.calls.to_string(),
                t.failed.to_string(),
                t.connections_opened.to_string(),
                micros(t.e2e_us.p50),
                micros(t.e2e_us.p90),
                micros(t.e2e_us.p99),
                t.ttft_us.map_or_else(|| "-".into(), |p| micros(p.p50)),
            ]);
        }
    }
    table
}

/// The headline: per gateway, scenario and metric, what the gateway adds across trials (mean of
/// the trials' medians, 95% t interval over trials), the resolution, and the verdict.
pub fn combined_table(result: &OverheadResult) -> Table {
    let mut table = Table::new(&[
        "gateway",
        "scenario",
        "metric",
        "trials",
        "added (mean of trials)",
        "95% interval over trials",
        "resolution",
        "p (Holm)",
        "verdict",
    ]);
    for c in &result.combined {
        table.push(vec![
            c.gateway.to_string(),
            c.scenario.clone(),
            c.metric.clone(),
            c.trials.to_string(),
            signed(c.added_us.estimate),
            format!("[{}, {}]", signed(c.added_us.low), signed(c.added_us.high)),
            resolution(c.resolution_us),
            if c.gateway.is_twin() && result.plan.twin {
                "-".to_string()
            } else {
                format!("{:.3}", c.p_adjusted)
            },
            c.verdict.clone(),
        ]);
    }
    table
}

/// Every pair of gateways against each other (empty with fewer than two gateways).
pub fn between_table(result: &OverheadResult) -> Table {
    let mut table = Table::new(&[
        "gateways",
        "scenario",
        "metric",
        "difference (first − second)",
        "95% interval",
        "p (Holm)",
        "verdict",
    ]);
    for b in &result.between {
        table.push(vec![
            format!("{} − {}", b.first, b.second),
            b.scenario.clone(),
            b.metric.clone(),
            signed(b.difference_us.estimate),
            format!(
                "[{}, {}]",
                signed(b.difference_us.low),
                signed(b.difference_us.high)
            ),
            format!("{:.3}", b.p_adjusted),
            b.verdict.clone(),
        ]);
    }
    table
}

/// How the resolution was obtained, in one sentence.
pub fn source(result: &OverheadResult) -> String {
    let plan = &result.plan;
    super::format::resolution_from(&result.resolution_source, &plan.targets, plan.twin)
}

/// How the verdicts are reached, in one paragraph for the reports.
pub fn method(result: &OverheadResult) -> String {
    let plan = &result.plan;
    let control = if plan.twin {
        let twin = crate::model::target::twin_info(&plan.targets);
        format!(
            "against the twin ({twin}), an A/A control called in the same rounds, by Welch's t \
             test of the two means across trials; the resolution is the farthest end of the twin's \
             interval from zero"
        )
    } else {
        "against zero (no twin: --twin none)".to_string()
    };
    let floor = if plan.min_effect_us > 0.0 {
        format!(", at least --min-effect {}", micros(plan.min_effect_us))
    } else {
        String::new()
    };
    format!(
        "Each trial gives the median of per-round differences (gateway − direct) with a bootstrap \
         interval; the verdict combines the trials: the mean of their medians with a 95% t \
         interval over trials (it carries the variation between trials), compared \
         {control}{floor}. The p-values of all {} rows are adjusted together (Holm), so the 5% \
         error rate holds for the whole table. A gateway 'adds latency' or is 'faster than direct' \
         only when the adjusted test says so and its interval lies beyond the resolution on that \
         side; otherwise it is within the resolution.",
        result
            .combined
            .iter()
            .filter(|c| !(plan.twin && c.gateway.is_twin()))
            .count()
    )
}

/// Per gateway, scenario, metric and trial: what the gateway adds, with its interval and verdict.
pub fn delta_table(result: &OverheadResult) -> Table {
    let confidence = (result.plan.confidence * 100.0).round();
    let interval_header = format!("{confidence}% interval");
    let mut table = Table::new(&[
        "gateway",
        "scenario",
        "metric",
        "trial",
        "pairs",
        "direct p50",
        "gateway p50",
        "added (median)",
        &interval_header,
        "this trial alone",
    ]);
    let gateways = result.plan.targets.iter().skip(1).map(|t| &t.name);
    for gateway in gateways {
        for trial in &result.trials {
            for d in trial.deltas.iter().filter(|d| &d.gateway == gateway) {
                table.push(vec![
                    d.gateway.to_string(),
                    trial.scenario.clone(),
                    d.metric.clone(),
                    trial.trial.to_string(),
                    d.pairs.to_string(),
                    micros(d.direct_median_us),
                    micros(d.gateway_median_us),
                    signed(d.added_us.estimate),
                    format!("[{}, {}]", signed(d.added_us.low), signed(d.added_us.high)),
                    d.verdict().to_string(),
                ]);
            }
        }
    }
    table
}

/// The deltas as numbers (µs) for spreadsheets: one row per gateway, scenario, metric and trial.
pub fn delta_csv(result: &OverheadResult) -> String {
    let mut table = Table::new(&[
        "gateway",
        "scenario",
        "metric",
        "trial",
        "pairs",
        "direct_p50_us",
        "gateway_p50_us",
        "added_us",
        "low_us",
        "high_us",
        "confidence",
        "distinguishable",
    ]);
    for trial in &result.trials {
        for d in &trial.deltas {
            table.push(vec![
                d.gateway.to_string(),
                trial.scenario.clone(),
                d.metric.clone(),
                trial.trial.to_string(),
                d.pairs.to_string(),
                format!("{:.1}", d.direct_median_us),
                format!("{:.1}", d.gateway_median_us),
                format!("{:.1}", d.added_us.estimate),
                format!("{:.1}", d.added_us.low),
                format!("{:.1}", d.added_us.high),
                d.added_us.confidence.to_string(),
                d.distinguishable.to_string(),
            ]);
        }
    }
    table.to_csv()
}

/// The terminal report: what ran, per-target figures, and the delta table last.
pub fn terminal(result: &OverheadResult) -> String {
    let plan = &result.plan;
    let mut out = format!(
        "loadgen overhead: {} trial(s) x {} rounds (+{} warm-up), targets in a shuffled order each round, seed {}\n",
        plan.trials, plan.rounds, plan.warmup_rounds, plan.seed
    );
    for t in &plan.targets {
        out.push_str(&format!(
            "  {:<12} {} ({}){}\n",
            t.name,
            t.target.url,
            t.target.resolved,
            t.disclosure()
                .map(|i| format!(" [{i}]"))
                .unwrap_or_default()
        ));
    }
    out.push('\n');
    out.push_str(&targets_table(result).to_text());
    if !result.resources.is_empty() {
        out.push('\n');
        out.push_str(&crate::report::resources::table(&result.resources).to_text());
    }
    out.push_str("\nper trial:\n");
    out.push_str(&delta_table(result).to_text());
    out.push_str("\nacross trials (the verdicts):\n");
    out.push_str(&combined_table(result).to_text());
    out.push_str(&format!("{}\n", source(result)));
    if !result.between.is_empty() {
        out.push_str("\ngateways against each other:\n");
        out.push_str(&between_table(result).to_text());
    }
    if result.interrupted {
        out.push_str("\ninterrupted: the rounds done so far are reported\n");
    }
    out.push_str(&super::terminal::closing(
        &[],
        result.valid,
        &result.invalid_reasons,
    ));
    out
}

/// A Markdown write-up: disclosure, the delta table, the per-target table.
pub fn markdown(result: &OverheadResult) -> String {
    let plan = &result.plan;
    let mut out = String::from("# Gateway overhead (paired rounds)\n\n");
    out.push_str(&format!(
        "{} trial(s) of {} measured rounds (+{} warm-up); each round calls every target once, \
         in a seeded shuffled order (seed {}), with the same `x-gatebench-seq`. Added latency is \
         the median of per-round differences (gateway − direct) with a {}% bootstrap interval \
         ({} resamples).\n\n",
        plan.trials,
        plan.rounds,
        plan.warmup_rounds,
        plan.seed,
        (plan.confidence * 100.0).round(),
        plan.resamples
    ));
    out.push_str("## Added latency across trials (the verdicts)\n\n");
    out.push_str(&method(result));
    out.push_str("\n\n");
    out.push_str(&combined_table(result).to_markdown());
    out.push_str(&format!("\n{}\n", source(result)));
    if !result.between.is_empty() {
        out.push_str("\n## Gateways against each other\n\n");
        out.push_str(
            "The difference of two gateways' figures across trials (Welch's t test), Holm-adjusted \
             over every pair, scenario and metric.\n\n",
        );
        out.push_str(&between_table(result).to_markdown());
    }
    out.push_str("\n## Added latency per trial\n\n");
    out.push_str(&delta_table(result).to_markdown());
    out.push_str("\n## Per target\n\n");
    out.push_str(&targets_table(result).to_markdown());
    if !result.resources.is_empty() {
        out.push_str("\n## Sampled processes (`--sample-pid`)\n\n");
        out.push_str(&crate::report::resources::table(&result.resources).to_markdown());
    }
    out.push_str(
        &Disclosure {
            setup: vec![format!(
                "Client pinned to core: {}",
                plan.core.map_or_else(|| "no".into(), |c| c.to_string())
            )],
            targets: &plan.targets,
            verdict: Some((result.valid, &result.invalid_reasons)),
            mock: result.mock.as_deref(),
            ..Disclosure::of(&result.envelope)
        }
        .markdown(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_reads_well() {
        assert_eq!(micros(850.4), "850 µs");
        assert_eq!(micros(1_250.0), "1.25 ms");
        assert_eq!(micros(2_100_000.0), "2.10 s");
        assert_eq!(signed(-12.0), "-12 µs");
        assert_eq!(signed(58.0), "+58 µs");
    }
}
