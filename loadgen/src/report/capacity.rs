//! A `loadgen capacity` result (schema `gatebench.loadgen.capacity/1`): each target's answer
//! and every run of its search, as tables and Markdown; and the terminal report: each target's
//! runs (rate, met or missed, goodput, percentiles, what was missed, whether the generator kept
//! up), the confirmations, and the answer with why it is a bound when it is one.

use std::fmt::Write as _;

use super::disclosure::Disclosure;
use super::table::Table;
use crate::results::capacity::{CapacityResult, Step, TargetSearch};

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

/// The terminal report.
pub fn terminal(result: &CapacityResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "capacity within {} (each run {} at a constant rate; answer within {:.0}%)",
        result.slo.text,
        result
            .plan
            .duration_us
            .map_or("?".into(), |us| format!("{:.0} s", us as f64 / 1e6)),
        result.precision * 100.0
    );
    for s in &result.searches {
        let _ = writeln!(out, "\n{} ({})", s.name, s.url);
        if s.idle_ms.is_none() && !s.steps.is_empty() {
            out.push_str(
                "  no request sent alone was answered: no step waited for a missed step's \
                 backlog\n",
            );
        }
        for (i, step) in s.steps.iter().enumerate() {
            out.push_str(&run_line(i + 1, step));
        }
        for step in &s.confirmations {
            let _ = writeln!(
                out,
                "  again   {:>10.1} req/s  {:<6}  goodput {:>10.1}/s  p99 {}us",
                step.rate,
                met(step),
                step.goodput,
                step.response_p99_us
            );
        }
        out.push_str(&answer(s));
    }
    out
}

fn met(step: &Step) -> &'static str {
    if step.met {
        "met"
    } else {
        "missed"
    }
}

/// One run of the search: its rate, verdict, goodput, percentiles, the objectives it missed,
/// and whether the generator kept its schedule.
fn run_line(number: usize, step: &Step) -> String {
    let failed: Vec<String> = step
        .judged
        .iter()
        .filter(|j| !j.met)
        .map(|j| j.objective.clone())
        .collect();
    format!(
        "  run {:>2} {:>10.1} req/s  {:<6}  goodput {:>10.1}/s  p50 {:>9}  p99 {:>9}  ok {:>7.3}%{}{}{}\n",
        number,
        step.rate,
        met(step),
        step.goodput,
        format!("{}us", step.response_p50_us),
        format!("{}us", step.response_p99_us),
        step.success_rate * 100.0,
        if failed.is_empty() {
            String::new()
        } else {
            format!("  missed: {}", failed.join(", "))
        },
        match (step.valid, step.conclusive) {
            (true, _) => String::new(),
            (false, true) => format!(
                "  [generator {} us late at p99; missed by far more]",
                step.generator_error_us
            ),
            (false, false) => "  [generator behind: inconclusive]".into(),
        },
        backlog(step)
    )
}

/// The wait for the target to serve a missed step's backlog before the step, when it took more
/// than the one request that found none, or did not clear.
fn backlog(step: &Step) -> String {
    match &step.backlog_wait {
        Some(w) if w.cleared && w.probes <= 1 => String::new(),
        Some(w) if w.cleared => format!(
            "  (after {:.0} ms for the backlog to be served)",
            w.waited_ms
        ),
        Some(w) => match &w.last_error {
            Some(error) => format!(
                "  [ran after {:.0} ms of waiting for a backlog: the last request sent alone \
                 failed ({error})]",
                w.waited_ms
            ),
            None => format!(
                "  [ran on a backlog: a request sent alone still took over {:.1} ms after {:.0} \
                 ms]",
                w.bound_ms, w.waited_ms
            ),
        },
        None => String::new(),
    }
}

/// The search's answer: a bracket, or a bound and what bounds it.
fn answer(s: &TargetSearch) -> String {
    let answer = match (s.bracket.passed, s.bracket.failed) {
        (Some(lo), Some(hi)) => format!(
            "between {lo:.1} (met) and {hi:.1} req/s (missed), {:.1}% apart",
            (hi / lo - 1.0) * 100.0
        ),
        (Some(lo), None) => format!("at least {lo:.1} req/s (met at the ceiling)"),
        (None, Some(hi)) => format!("below {hi:.1} req/s (missed at every rate tried)"),
        (None, None) => "not measured".into(),
    };
    let why = match s.limited_by.as_deref() {
        Some("upstream") => " — the direct upstream's own capacity bounds it",
        Some("generator") => {
            " — the generator fell behind its schedule: a bound of loadgen on this machine, not \
             of the target"
        }
        Some("runs") => " — out of runs before the precision",
        Some("interrupted") => " — interrupted",
        _ => "",
    };
    format!("  capacity: {answer}, in {} runs{why}\n", s.steps.len())
}
