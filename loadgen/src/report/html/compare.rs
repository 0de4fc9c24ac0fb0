//! The page of a `loadgen compare` result: the seven-gateway table, added latency per percentile
//! with its interval, latency by percentile per target, and the first trial's timeline.

use super::{figure, latency_axis, meta, nines, page, percentile_axis, resources_html};
use super::{table_html, upstream_html, verdict};
use crate::report::compare::{delta_table, method, summary_table};
use crate::report::svg::{escape, interval_plot, Axis, IntervalRow, LinePlot, Series};
use crate::results::compare::CompareResult;

/// The page of a `loadgen compare` result: the seven-gateway table, added latency per percentile
/// with its interval, latency by percentile per target, and the first trial's timeline.
pub fn compare_page(view: &CompareResult) -> String {
    page("Gateway comparison under load", &compare_body(view))
}

/// The body of [`compare_page`]: also the latency half of a profile's page.
pub(crate) fn compare_body(view: &CompareResult) -> String {
    let mut body = meta(
        &format!("{} alternating trial(s) per target; ", view.header.trials),
        &view.envelope,
        " Response times are corrected for coordinated omission.",
        &verdict(view.footer.valid, &view.footer.invalid_reasons),
    );
    body.push_str(&format!("<p>{}</p>", escape(&method(view))));
    body.push_str(&format!(
        "<p>{}</p>",
        escape(&crate::report::compare::source(view))
    ));
    body.push_str(&table_html(&summary_table(&view.summary)));
    body.push_str("<h2>Added latency</h2>");
    body.push_str(&added_figure(view));
    body.push_str(&table_html(&delta_table(&view.deltas)));
    body.push_str(&resources_html(&view.footer.resources));
    body.push_str("<h2>Response time by percentile</h2>");
    body.push_str(&percentiles_figure(view));
    body.push_str("<h2>Timeline (trial 1)</h2>");
    body.push_str(&timeline_figure(view));
    body.push_str(&upstream_html(view.header.mock.as_deref()));
    body
}

/// Each gateway's added response time per percentile with its interval (nothing when no
/// percentile has one).
fn added_figure(view: &CompareResult) -> String {
    let rows: Vec<IntervalRow> = view
        .deltas
        .iter()
        .filter_map(|d| {
            let i = d.added_us?;
            Some(IntervalRow {
                label: format!("{} {}", d.gateway, d.percentile),
                estimate: i.estimate,
                low: i.low,
                high: i.high,
            })
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    figure(interval_plot(
        "Added response time per percentile: mean over trials, 95% interval",
        "added latency (µs); grey: not distinguishable from direct",
        &rows,
    ))
}

/// Each target's response time at p50, p90, p99 and p99.9 (medians over trials).
fn percentiles_figure(view: &CompareResult) -> String {
    let series = view
        .summary
        .iter()
        .map(|s| Series {
            name: s.name.to_string(),
            points: vec![
                (nines(0.5), s.p50_us),
                (nines(0.9), s.p90_us),
                (nines(0.99), s.p99_us),
                (nines(0.999), s.p999_us),
            ],
        })
        .collect();
    figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time by percentile (median over trials)".into(),
            x: percentile_axis(),
            y: latency_axis(),
            series,
        }
        .to_svg(),
    )
}

/// Each target's p99 per second in the first trial.
fn timeline_figure(view: &CompareResult) -> String {
    let series = view
        .runs
        .iter()
        .filter(|r| r.trial == 1)
        .map(|r| Series {
            name: format!("{} p99", r.name),
            points: r
                .run
                .timeline
                .iter()
                .map(|s| (s.second as f64, s.response_time_p99_us as f64))
                .collect(),
        })
        .collect();
    figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time p99 per second, trial 1".into(),
            x: Axis {
                label: "second of the measured window".into(),
                ..Axis::default()
            },
            y: latency_axis(),
            series,
        }
        .to_svg(),
    )
}
