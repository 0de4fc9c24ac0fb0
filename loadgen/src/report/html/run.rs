//! The page of a `loadgen run` result (merged or not): the table, classes and stages, the
//! shards, latency by percentile per run, each run's per-second timeline, and its sessions.

use super::{figure, latency_axis, meta, nines, page, percentile_axis, table_html, upstream_html};
use crate::report::run::{groups_tables, runs_table, shards_intro, shards_table};
use crate::report::svg::{escape, Axis, LinePlot, Series};
use crate::results::breakdown::SecondSummary;
use crate::results::run::{RunResult, TargetRun};
use crate::results::shards::Shards;

/// The page of a `loadgen run` result: latency by percentile per run, the per-second timeline,
/// and the table.
pub fn run_page(view: &RunResult) -> String {
    let mut body = meta(
        "",
        &view.envelope,
        " Response times are corrected for coordinated omission.",
        if view.valid { "valid" } else { "invalid" },
    );
    body.push_str(&table_html(&runs_table(view)));
    for (title, table) in groups_tables(view) {
        body.push_str(&format!("<h2>{}</h2>", escape(&title)));
        body.push_str(&table_html(&table));
    }
    if let Some(shards) = &view.shards {
        body.push_str(&shards_html(shards));
    }
    body.push_str("<h2>Response time by percentile</h2>");
    body.push_str(&percentiles_figure(view));
    body.push_str("<h2>Timeline</h2>");
    for run in &view.runs {
        body.push_str(&timeline_figure(view, run));
    }
    body.push_str(&super::sessions::sessions_html(view));
    body.push_str(&upstream_html(view.mock.as_deref()));
    page("Load run", &body)
}

/// A run's name in the plots: its target and scenario.
fn label(run: &TargetRun) -> String {
    format!("{} {}", run.target.url, run.scenario)
}

/// The shards a merged result was added from, and what the merge says of them.
fn shards_html(shards: &Shards) -> String {
    let mut out = String::from("<h2>Shards</h2>");
    out.push_str(&format!("<p>{}</p>", escape(&shards_intro(shards))));
    out.push_str(&table_html(&shards_table(shards)));
    for note in &shards.notes {
        out.push_str(&format!("<p class=\"meta\">{}</p>", escape(note)));
    }
    out
}

/// Every run's response time at p50, p90, p99 and p99.9.
fn percentiles_figure(view: &RunResult) -> String {
    let series = view
        .runs
        .iter()
        .filter_map(|r| {
            let m = r.metrics.get("response_time")?;
            let points = [(0.5, m.p50), (0.9, m.p90), (0.99, m.p99), (0.999, m.p999)]
                .iter()
                .map(|&(p, v)| (nines(p), v as f64))
                .collect();
            Some(Series {
                name: label(r),
                points,
            })
        })
        .collect();
    figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time by percentile (from the intended send)".into(),
            x: percentile_axis(),
            y: latency_axis(),
            series,
        }
        .to_svg(),
    )
}

/// One run's p50 and p99 per second, each stage of a ramp marked where it starts.
fn timeline_figure(view: &RunResult, run: &TargetRun) -> String {
    let pick = |f: fn(&SecondSummary) -> u64| {
        run.timeline
            .iter()
            .map(|s| (s.second as f64, f(s) as f64))
            .collect::<Vec<_>>()
    };
    // Each stage of a ramp starts at a dashed line (seconds of the measured window); a jump (a
    // stage of no length) has none of its own.
    let warmup_s = view.plan.warmup_us as f64 / 1e6;
    let marks = run
        .stages
        .iter()
        .filter_map(|g| {
            let stage = g.stage?;
            let (start, from, to) = (stage.start_s, stage.from_rate, stage.to_rate);
            (stage.end_s > start).then_some(())?;
            Some((
                start - warmup_s,
                format!("stage {}: {from:.0}→{to:.0}/s", g.name),
            ))
        })
        .collect();
    figure(
        LinePlot {
            marks,
            title: format!("Per second: {}", label(run)),
            x: Axis {
                label: "second of the measured window".into(),
                ..Axis::default()
            },
            y: latency_axis(),
            series: vec![
                Series {
                    name: "p50".into(),
                    points: pick(|s| s.response_time_p50_us),
                },
                Series {
                    name: "p99".into(),
                    points: pick(|s| s.response_time_p99_us),
                },
            ],
        }
        .to_svg(),
    )
}
