//! Self-contained HTML reports: tables and inline SVG plots in one file, with no script and no
//! external resource, so the page opens anywhere, offline.

use gatebench_shared::stats::quantile_of_sorted;

use crate::results::overhead::OverheadResult;

use super::overhead::{between_table, combined_table, delta_table, method, targets_table};
use super::run::{runs_table, shards_intro, shards_table};
use super::svg::{escape, interval_plot, Axis, IntervalRow, LinePlot, Series};
use super::table::Table;
use crate::results::run::{RunResult, SecondSummary, TargetRun};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}\
td{text-align:right}td:first-child{text-align:left}th{background:#f3f3f3}\
.figure{margin:1.5em 0}.meta{color:#555;font-size:13px}code{background:#f3f3f3;padding:1px 3px}";

/// Percentiles plotted on a "nines" axis: x = −log10(1 − p).
const PERCENTILES: [f64; 6] = [0.5, 0.75, 0.9, 0.99, 0.999, 0.9999];

fn nines(p: f64) -> f64 {
    -(1.0 - p).log10()
}

fn percentile_axis() -> Axis {
    Axis {
        label: "percentile".into(),
        log: false,
        ticks: PERCENTILES
            .iter()
            .map(|&p| (nines(p), format!("{}%", p * 100.0)))
            .collect(),
    }
}

fn latency_axis() -> Axis {
    Axis {
        label: "latency (µs, log scale)".into(),
        log: true,
        ticks: Vec::new(),
    }
}

pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1>{body}</body></html>\n",
        t = escape(title)
    )
}

fn figure(svg: String) -> String {
    format!("<div class=\"figure\">{svg}</div>")
}

pub(crate) fn table_html(table: &Table) -> String {
    let mut out = String::from("<table><thead><tr>");
    for h in &table.header {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{}</td>", escape(cell)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// The page of a `loadgen overhead` result: added latency with intervals, latency by percentile
/// per target, and the tables.
pub fn overhead_page(result: &OverheadResult) -> String {
    let mut body = format!(
        "<p class=\"meta\">{} trial(s) × {} paired rounds (+{} warm-up), seed {}; {} on {}; gatebench {}, {}. Verdict: <b>{}</b>.</p>",
        result.plan.trials,
        result.plan.rounds,
        result.plan.warmup_rounds,
        result.plan.seed,
        escape(&result.envelope.started_at),
        escape(&crate::report::disclosure::host_line(&result.envelope.host, result.envelope.open_files.as_ref())),
        escape(&result.envelope.gatebench_version),
        escape(&crate::report::disclosure::shell_line(&result.envelope.command)),
        if result.valid {
            "valid".to_string()
        } else {
            escape(&format!("invalid: {}", result.invalid_reasons.join("; ")))
        }
    );
    let rows: Vec<IntervalRow> = result
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
        .collect();
    body.push_str("<h2>Added latency across trials (the verdicts)</h2>");
    body.push_str(&format!("<p>{}</p>", escape(&method(result))));
    body.push_str(&table_html(&combined_table(result)));
    if !result.between.is_empty() {
        body.push_str("<h2>Gateways against each other</h2>");
        body.push_str(&table_html(&between_table(result)));
    }
    body.push_str("<h2>Added latency per trial</h2>");
    body.push_str(&figure(interval_plot(
        "Added latency: median of per-round differences, 95% interval",
        "added latency (µs); grey: not distinguishable from direct",
        &rows,
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

/// The page of a `loadgen run` result: latency by percentile per run, the per-second timeline,
/// and the table.
pub fn run_page(view: &RunResult) -> String {
    let mut body = format!(
        "<p class=\"meta\">{} on {}; gatebench {}, <code>{}</code>. Response times are corrected for coordinated omission. Verdict: <b>{}</b>.</p>",
        escape(&view.envelope.started_at),
        escape(&crate::report::disclosure::host_line(&view.envelope.host, view.envelope.open_files.as_ref())),
        escape(&view.envelope.gatebench_version),
        escape(&crate::report::disclosure::shell_line(&view.envelope.command)),
        if view.valid { "valid" } else { "invalid" }
    );
    body.push_str(&table_html(&runs_table(view)));
    for (title, table) in super::run::groups_tables(view) {
        body.push_str(&format!("<h2>{}</h2>", escape(&title)));
        body.push_str(&table_html(&table));
    }
    if let Some(shards) = &view.shards {
        body.push_str("<h2>Shards</h2>");
        body.push_str(&format!("<p>{}</p>", escape(&shards_intro(shards))));
        body.push_str(&table_html(&shards_table(shards)));
        for note in &shards.notes {
            body.push_str(&format!("<p class=\"meta\">{}</p>", escape(note)));
        }
    }
    let label = |r: &TargetRun| format!("{} {}", r.target.url, r.scenario);
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
    body.push_str("<h2>Response time by percentile</h2>");
    body.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time by percentile (from the intended send)".into(),
            x: percentile_axis(),
            y: latency_axis(),
            series,
        }
        .to_svg(),
    ));
    body.push_str("<h2>Timeline</h2>");
    for run in &view.runs {
        let pick = |f: fn(&SecondSummary) -> u64| {
            run.timeline
                .iter()
                .map(|s| (s.second as f64, f(s) as f64))
                .collect::<Vec<_>>()
        };
        // Each stage of a ramp starts at a dashed line (seconds of the measured window); a
        // jump (a stage of no length) has none of its own.
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
        body.push_str(&figure(
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
        ));
    }
    body.push_str(&upstream_html(view.mock.as_deref()));
    page("Load run", &body)
}

/// The page of a `loadgen compare` result: the seven-gateway table, added latency per percentile
/// with its interval, latency by percentile per target, and the first trial's timeline.
pub fn compare_page(view: &crate::results::compare::CompareResult) -> String {
    page("Gateway comparison under load", &compare_body(view))
}

/// The body of [`compare_page`]: also the latency half of a profile's page.
pub(crate) fn compare_body(view: &crate::results::compare::CompareResult) -> String {
    use super::compare::{delta_table, summary_table};
    let mut body = format!(
        "<p class=\"meta\">{} alternating trial(s) per target; {} on {}; gatebench {}, <code>{}</code>. Response times are corrected for coordinated omission. Verdict: <b>{}</b>.</p>",
        view.trials,
        escape(&view.envelope.started_at),
        escape(&crate::report::disclosure::host_line(&view.envelope.host, view.envelope.open_files.as_ref())),
        escape(&view.envelope.gatebench_version),
        escape(&crate::report::disclosure::shell_line(&view.envelope.command)),
        if view.valid {
            "valid".to_string()
        } else {
            escape(&format!("invalid: {}", view.invalid_reasons.join("; ")))
        }
    );
    body.push_str(&format!("<p>{}</p>", escape(&super::compare::method(view))));
    body.push_str(&table_html(&summary_table(&view.summary)));
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
    body.push_str("<h2>Added latency</h2>");
    if !rows.is_empty() {
        body.push_str(&figure(interval_plot(
            "Added response time per percentile: mean over trials, 95% interval",
            "added latency (µs); grey: not distinguishable from direct",
            &rows,
        )));
    }
    body.push_str(&table_html(&delta_table(&view.deltas)));
    body.push_str(&resources_html(&view.resources));
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
    body.push_str("<h2>Response time by percentile</h2>");
    body.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time by percentile (median over trials)".into(),
            x: percentile_axis(),
            y: latency_axis(),
            series,
        }
        .to_svg(),
    ));
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
    body.push_str("<h2>Timeline (trial 1)</h2>");
    body.push_str(&figure(
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
    ));
    body.push_str(&upstream_html(view.mock.as_deref()));
    body
}

/// A sample as a line by percentile, at the percentiles it can tell apart from its maximum.
fn percentile_series(name: &str, mut values: Vec<f64>) -> Series {
    values.sort_by(f64::total_cmp);
    let points = PERCENTILES
        .iter()
        .filter(|&&p| (1.0 - p) * values.len() as f64 >= 1.0 || p == 0.5)
        .filter_map(|&p| Some((nines(p), quantile_of_sorted(&values, p)?)))
        .collect();
    Series {
        name: name.to_string(),
        points,
    }
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
    values: impl Fn(&crate::results::overhead::Trial, &crate::results::role::Role) -> Vec<f64>,
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

fn resources_html(resources: &[crate::results::resources::ResourceReport]) -> String {
    if resources.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Resources of the system under test</h2>");
    out.push_str(&table_html(&crate::report::resources::table(resources)));
    let series = resources
        .iter()
        .map(|r| Series {
            name: format!("{} RSS", r.name),
            points: r
                .samples
                .iter()
                .map(|s| (s.t_s, s.rss_bytes as f64 / (1 << 20) as f64))
                .collect(),
        })
        .collect();
    out.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Resident memory every 250 ms (load starts after the first second)".into(),
            x: Axis {
                label: "seconds".into(),
                ..Axis::default()
            },
            y: Axis {
                label: "MiB".into(),
                ..Axis::default()
            },
            series,
        }
        .to_svg(),
    ));
    out
}

/// The direct upstream's configuration when it is a gatebench mock (nothing otherwise).
fn upstream_html(mock: Option<&str>) -> String {
    match mock {
        Some(toml) => format!(
            "<h2>The upstream</h2><p>The direct upstream is a gatebench mock, configured as:</p><pre>{}</pre>",
            escape(toml.trim_end())
        ),
        None => String::new(),
    }
}

fn meta(envelope: &crate::results::envelope::Envelope, valid: bool, reasons: &[String]) -> String {
    format!(
        "<p class=\"meta\">{} on {}; gatebench {}, <code>{}</code>. Verdict: <b>{}</b>.</p>",
        escape(&envelope.started_at),
        escape(&crate::report::disclosure::host_line(
            &envelope.host,
            envelope.open_files.as_ref()
        )),
        escape(&envelope.gatebench_version),
        escape(&crate::report::disclosure::shell_line(&envelope.command)),
        if valid {
            "valid".to_string()
        } else {
            escape(&format!("invalid: {}", reasons.join("; ")))
        }
    )
}

/// The page of a `loadgen sweep` result: the sweep curves and the levels table.
pub fn sweep_page(view: &crate::results::sweep::SweepResult) -> String {
    let mut body = meta(&view.envelope, view.valid, &view.invalid_reasons);
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
        view.targets
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
    body.push_str("<h2>Sweep</h2>");
    body.push_str(&figure(
        LinePlot {
            marks: Vec::new(),
            title: "Response time p99 by load level (median over trials)".into(),
            x: level_axis.clone(),
            y: latency_axis(),
            series: per_target(|s| s.p99_us),
        }
        .to_svg(),
    ));
    body.push_str(&figure(
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
    body.push_str(&format!(
        "<p>Single-client floor (direct p99 at concurrency 1): {:.0} µs. Levels whose direct p99 exceeds twice that are marked saturated.</p>",
        view.floor_p99_us
    ));
    body.push_str(&table_html(&super::sweep::levels_table(&view.levels)));
    body.push_str(&format!(
        "<pre>{}</pre>",
        escape(super::sweep::headline_text(&view.headline).trim())
    ));
    body.push_str(&resources_html(&view.resources));
    body.push_str(&upstream_html(view.mock.as_deref()));
    page("Load sweep", &body)
}

/// The page of a `loadgen ladder` result: TTFT and completions by level, and the table.
pub fn ladder_page(view: &crate::results::ladder::LadderResult) -> String {
    let mut body = meta(&view.envelope, view.valid, &view.invalid_reasons);
    let mut levels: Vec<usize> = view.rungs.iter().map(|r| r.level).collect();
    levels.sort_unstable();
    levels.dedup();
    let level_axis = Axis {
        label: "simultaneous streams (log scale)".into(),
        log: true,
        ticks: levels.iter().map(|&l| (l as f64, l.to_string())).collect(),
    };
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
    body.push_str(&table_html(&super::ladder::rungs_table(&view.rungs)));
    body.push_str(&resources_html(&view.resources));
    body.push_str(&upstream_html(view.mock.as_deref()));
    page("Simultaneous streams (ladder)", &body)
}

/// A capacity result: each target's answer and every run of its search.
pub fn capacity_page(view: &crate::results::capacity::CapacityResult) -> String {
    let mut body = format!(
        "<p class=\"meta\">Started {} · <code>{}</code> · answers within {:.0}%{}</p>",
        escape(&view.envelope.started_at),
        escape(&crate::report::disclosure::shell_line(
            &view.envelope.command
        )),
        view.precision * 100.0,
        if view.valid {
            ""
        } else {
            " · not every search ended within the precision or at a ceiling"
        }
    );
    body.push_str(&table_html(&super::capacity::answers_table(view)));
    body.push_str("<h2>Runs</h2>");
    body.push_str(&table_html(&super::capacity::steps_table(view)));
    page(&format!("Capacity within {}", view.slo.text), &body)
}
