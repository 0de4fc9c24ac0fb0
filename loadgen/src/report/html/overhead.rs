//! The page of a `loadgen overhead` result: added latency with intervals, latency by percentile
//! per target, the per-round differences, and the tables.

use super::{figure, latency_axis, meta, page, percentile_axis, percentile_series, resources_html};
use super::{table_html, upstream_html, verdict};
use crate::report::overhead::{between_table, combined_table, delta_table, method, targets_table};
use crate::report::svg::{escape, interval_plot, Axis, IntervalRow, LinePlot};
use crate::results::overhead::OverheadResult;

/// The page of a `loadgen overhead` result: added latency with intervals, latency by percentile
/// per target, and the tables.
pub fn overhead_page(result: &OverheadResult) -> String {
    let plan = &result.plan;
    let mut body = meta(
        &format!(
            "{} trial(s) × {} paired rounds (+{} warm-up), seed {}; ",
            plan.trials, plan.rounds, plan.warmup_rounds, plan.seed
        ),
        &result.envelope,
        "",
        &verdict(result.valid, &result.invalid_reasons),
    );
    body.push_str("<h2>Added latency across trials (the verdicts)</h2>");
    body.push_str(&format!("<p>{}</p>", escape(&method(result))));
    body.push_str(&format!(
        "<p>{}</p>",
        escape(&crate::report::overhead::source(result))
    ));
    body.push_str(&table_html(&combined_table(result)));
    if !result.between.is_empty() {
        body.push_str("<h2>Gateways against each other</h2>");
        body.push_str(&table_html(&between_table(result)));
    }
    body.push_str("<h2>Added latency per trial</h2>");
    body.push_str(&figure(interval_plot(
        "Added latency: median of per-round differences, 95% interval",
        "added latency (µs); grey: not distinguishable from direct",
        &interval_rows(result),
    )));
    body.push_str(&table_html(&delta_table(result)));

    body.push_str("<h2>Latency by percentile</h2>");
    body.push_str(&per_scenario_plots(
        result,
        "End-to-end time by percentile",
        latency_axis(),
        |trial, target| {
            trial
                .targets
                .iter()
                .filter(|x| x.name == *target)
                .flat_map(|x| x.rounds_e2e_us.iter().flatten().copied())
                .collect()
        },
    ));
    body.push_str(&round_differences_html(result));
    body.push_str("<h2>Per target</h2>");
    body.push_str(&table_html(&targets_table(result)));
    body.push_str(&resources_html(&result.resources));
    body.push_str(&upstream_html(result.mock.as_deref()));
    page("Gateway overhead (paired rounds)", &body)
}

/// Each trial's added latency of each gateway, scenario and metric, with its interval.
fn interval_rows(result: &OverheadResult) -> Vec<IntervalRow> {
    result
        .trials
        .iter()
        .flat_map(|t| {
            t.deltas.iter().map(move |d| IntervalRow {
                label: format!("{} {} {} #{}", d.gateway, t.scenario, d.metric, t.trial),
                estimate: d.added_us.estimate,
                low: d.added_us.low,
                high: d.added_us.high,
            })
        })
        .collect()
}

/// Per scenario, the distribution of the per-round end-to-end differences (target − direct)
/// of every target, all trials together: what the medians summarise. Direct's own line is the
/// zero reference, and keeps each target's colour the one it has in the other plots.
fn round_differences_html(result: &OverheadResult) -> String {
    let mut out = String::from("<h2>Per-round differences</h2>");
    let axis = Axis {
        label: "difference (µs)".into(),
        log: false,
        ticks: Vec::new(),
    };
    out.push_str(&per_scenario_plots(
        result,
        "Per-round end-to-end difference from direct by percentile",
        axis,
        |trial, target| {
            let direct = trial.targets.first().map(|x| &x.rounds_e2e_us[..]);
            let this = trial.targets.iter().find(|x| x.name == *target);
            let pairs = direct.zip(this.map(|x| &x.rounds_e2e_us[..]));
            pairs
                .into_iter()
                .flat_map(|(d, g)| d.iter().zip(g).filter_map(|(d, g)| Some((*g)? - (*d)?)))
                .collect()
        },
    ));
    out
}

/// One plot per scenario (in name order) of every target's `values` by percentile, all trials
/// together; `values` gives a target's sample of one trial.
fn per_scenario_plots(
    result: &OverheadResult,
    title: &str,
    y: Axis,
    values: impl Fn(&crate::results::overhead::Trial, &crate::model::role::Role) -> Vec<f64>,
) -> String {
    let mut scenarios = crate::results::overhead::scenarios(&result.trials);
    scenarios.sort_unstable();
    let mut out = String::new();
    for scenario in scenarios {
        let series = result.plan.targets.iter().map(|target| {
            let sample: Vec<f64> = result
                .trials
                .iter()
                .filter(|t| t.scenario == scenario)
                .flat_map(|t| values(t, &target.name))
                .collect();
            percentile_series(target.name.as_str(), sample)
        });
        out.push_str(&figure(
            LinePlot {
                marks: Vec::new(),
                title: format!("{title}, {scenario} (all trials)"),
                x: percentile_axis(),
                y: y.clone(),
                series: series.collect(),
            }
            .to_svg(),
        ));
    }
    out
}
