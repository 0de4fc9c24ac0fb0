//! A `loadgen capacity` result (schema `gatebench.loadgen.capacity/1`): each target's answer
//! and every run of its search, as tables and Markdown.

use super::disclosure::Disclosure;
use super::table::Table;
use crate::results::capacity::CapacityResult;

fn rate(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.1}"))
}

/// One row per target: the two rates its capacity lies between.
pub fn answers_table(view: &CapacityResult) -> Table {
    let mut table = Table::new(&[
        "target",
        "met (req/s)",
        "missed (req/s)",
        "apart",
        "runs",
        "ceiling (req/s)",
        "bound by",
    ]);
    for s in &view.searches {
        let apart = match (s.bracket.passed, s.bracket.failed) {
            (Some(lo), Some(hi)) => format!("{:.1}%", (hi / lo - 1.0) * 100.0),
            _ => "-".into(),
        };
        table.push(vec![
            s.name.to_string(),
            rate(s.bracket.passed),
            rate(s.bracket.failed),
            apart,
            s.bracket.runs.to_string(),
            format!("{:.1}", s.ceiling),
            s.limited_by.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    table
}

/// Every run of every search.
pub fn steps_table(view: &CapacityResult) -> Table {
    let mut table = Table::new(&[
        "target",
        "run",
        "rate (req/s)",
        "SLO",
        "goodput (req/s)",
        "success",
        "P50 (us)",
        "P99 (us)",
        "valid",
    ]);
    for s in &view.searches {
        for (i, step) in s.steps.iter().enumerate() {
            table.push(vec![
                s.name.to_string(),
                (i + 1).to_string(),
                format!("{:.1}", step.rate),
                if step.met { "met" } else { "missed" }.into(),
                format!("{:.1}", step.goodput),
                format!("{:.2}%", step.success_rate * 100.0),
                step.response_p50_us.to_string(),
                step.response_p99_us.to_string(),
                if step.valid { "yes" } else { "no" }.into(),
            ]);
        }
    }
    table
}

/// A Markdown write-up of a capacity result.
pub fn markdown(view: &CapacityResult) -> String {
    let mut out = format!(
        "# Capacity within {}\n\nThe highest rate each target sustained within the SLO, between \
         the highest rate that met it and the lowest that missed it (answer within {:.0}%).\n\n",
        view.slo.text,
        view.precision * 100.0
    );
    out.push_str(&answers_table(view).to_markdown());
    out.push_str("\n## Runs\n\n");
    out.push_str(&steps_table(view).to_markdown());
    out.push_str(
        &Disclosure {
            targets: &view.targets,
            mock: view.mock.as_deref(),
            ..Disclosure::of(&view.envelope)
        }
        .markdown(),
    );
    if !view.valid {
        out.push_str("\nNot every search ended within the precision or at a ceiling.\n");
    }
    out
}
