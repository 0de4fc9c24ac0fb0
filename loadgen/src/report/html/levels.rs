//! The pages of the results by load level: `loadgen sweep` (its curves and levels table),
//! `loadgen ladder` (TTFT and completions by level) and `loadgen capacity` (each target's
//! answer and every run of its search).

use super::verdict;
use super::{figure, latency_axis, meta, page, resources_html, table_html, upstream_html};
use crate::report::disclosure::shell_line;
use crate::report::svg::{escape, Axis, LinePlot, Series};
use crate::results::capacity::CapacityResult;
use crate::results::ladder::LadderResult;
use crate::results::sweep::SweepResult;

/// The page of a `loadgen sweep` result: the sweep curves and the levels table.
pub fn sweep_page(view: &SweepResult) -> String {
    let mut body = meta(
        "",
        &view.envelope,
        "",
        &verdict(view.footer.valid, &view.footer.invalid_reasons),
    );
    body.push_str("<h2>Sweep</h2>");
    body.push_str(&sweep_figures(view));
    body.push_str(&format!(
        "<p>Single-client floor (direct p99 at concurrency 1): {:.0} µs. Levels whose direct p99 exceeds twice that are marked saturated.</p>",
        view.floor_p99_us
    ));
    body.push_str(&table_html(&crate::report::sweep::levels_table(
        &view.levels,
    )));
    body.push_str(&format!(
        "<pre>{}</pre>",
        escape(crate::report::sweep::headline_text(&view.headline).trim())
    ));
    body.push_str(&format!(
        "<p>{}</p>",
        escape(&crate::report::sweep::source(view))
    ));
    body.push_str(&resources_html(&view.footer.resources));
    body.push_str(&upstream_html(view.header.mock.as_deref()));
    page("Load sweep", &body)
}

/// The page of a `loadgen ladder` result: TTFT and completions by level, and the table.
pub fn ladder_page(view: &LadderResult) -> String {
    let mut body = meta(
        "",
        &view.envelope,
        "",
        &verdict(view.footer.valid, &view.footer.invalid_reasons),
    );
    let level_axis = streams_axis(&view.rungs);
    let per_target = |pick: fn(&crate::results::ladder::Rung) -> f64, suffix: &str| {
        view.targets
            .iter()
            .map(|t| Series {
                name: format!("{}{suffix}", t.name),
                points: view
                    .rungs
                    .iter()
                    .filter(|r| r.name == t.name)
                    .map(|r| (r.level as f64, pick(r)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let mut ttft = per_target(|r| r.ttft_p50_us, " p50");
    ttft.extend(per_target(|r| r.ttft_p95_us, " p95"));
    body.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Time to first token from the common start".into(),
            x: level_axis.clone(),
            y: latency_axis(),
            series: ttft,
        }
        .to_svg(),
    ));
    body.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Streams completed (share of those started)".into(),
            x: level_axis,
            y: Axis {
                label: "completed (%)".into(),
                ..Axis::default()
            },
            series: per_target(|r| 100.0 * r.completed as f64 / r.level.max(1) as f64, ""),
        }
        .to_svg(),
    ));
    body.push_str(&table_html(&crate::report::ladder::rungs_table(
        &view.rungs,
    )));
    body.push_str(&resources_html(&view.footer.resources));
    body.push_str(&upstream_html(view.mock.as_deref()));
    page("Simultaneous streams (ladder)", &body)
}

/// A capacity result: each target's answer and every run of its search.
pub fn capacity_page(view: &CapacityResult) -> String {
    let mut body = format!(
        "<p class=\"meta\">Started {} · <code>{}</code> · answers within {:.0}%{}</p>",
        escape(&view.envelope.started_at),
        escape(&shell_line(&view.envelope.command)),
        view.precision * 100.0,
        if view.valid {
            ""
        } else {
            " · not every search ended within the precision or at a ceiling"
        }
    );
    body.push_str(&table_html(&crate::report::capacity::answers_table(view)));
    body.push_str("<h2>Runs</h2>");
    body.push_str(&table_html(&crate::report::capacity::steps_table(view)));
    page(&format!("Capacity within {}", view.slo.text), &body)
}

/// Each target's p99 and throughput by load level.
fn sweep_figures(view: &SweepResult) -> String {
    let log_levels = view.level_kind == crate::options::LevelKind::Concurrency;
    let level_axis = Axis {
        label: format!("{} (log scale)", view.level_kind),
        log: log_levels,
        ticks: view
            .levels
            .iter()
            .map(|l| (l.level, l.level.to_string()))
            .collect(),
    };
    let per_target = |pick: fn(&crate::results::compare::TargetSummary) -> f64| {
        view.header
            .targets
            .iter()
            .map(|t| Series {
                name: t.name.to_string(),
                points: view
                    .levels
                    .iter()
                    .filter_map(|l| {
                        let s = l.summary.iter().find(|s| s.name == t.name)?;
                        Some((l.level, pick(s)))
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let mut out = figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time p99 by load level (median over trials)".into(),
            x: level_axis.clone(),
            y: latency_axis(),
            series: per_target(|s| s.p99_us),
        }
        .to_svg(),
    );
    out.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Throughput by load level".into(),
            x: level_axis,
            y: Axis {
                label: "requests/s".into(),
                ..Axis::default()
            },
            series: per_target(|s| s.throughput),
        }
        .to_svg(),
    ));
    out
}

/// The ladder's levels, on a log scale.
fn streams_axis(rungs: &[crate::results::ladder::Rung]) -> Axis {
    let mut levels: Vec<usize> = rungs.iter().map(|r| r.level).collect();
    levels.sort_unstable();
    levels.dedup();
    Axis {
        label: "simultaneous streams (log scale)".into(),
        log: true,
        ticks: levels.iter().map(|&l| (l as f64, l.to_string())).collect(),
    }
}
