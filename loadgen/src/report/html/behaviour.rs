//! The page of a `loadgen behaviour` result: per gateway, the timeline of its last trial (each
//! upstream's share of the arrivals each second and the client's latency, the window marked),
//! then the figures and the tables of the terminal report.

use super::{figure, meta, page, table_html, verdict};
use crate::report::behaviour::{figures_table, markdown, timeline_table};
use crate::report::svg::{escape, Axis, LinePlot, Series};
use crate::results::behaviour::{BehaviourResult, Trial};

fn window_marks(trial: &Trial) -> Vec<(f64, String)> {
    let mut marks = Vec::new();
    let mut last = "";
    for s in &trial.seconds {
        if s.phase != last && !last.is_empty() {
            marks.push((s.second as f64, format!("{} starts", s.phase)));
        }
        last = &s.phase;
    }
    marks
}

fn share_plot(name: &str, trial: &Trial) -> String {
    let series = trial
        .upstream_requests
        .keys()
        .map(|u| Series {
            name: u.clone(),
            points: trial
                .seconds
                .iter()
                .map(|s| {
                    let total: u64 = s.by_upstream.values().sum();
                    let mine = s.by_upstream.get(u).copied().unwrap_or(0);
                    (
                        s.second as f64,
                        if total == 0 {
                            0.0
                        } else {
                            100.0 * mine as f64 / total as f64
                        },
                    )
                })
                .collect(),
        })
        .collect();
    LinePlot {
        title: format!("{name}: each upstream's share of the arrivals, second by second"),
        x: Axis {
            label: "second of the trial".into(),
            ..Axis::default()
        },
        y: Axis {
            label: "share (%)".into(),
            ..Axis::default()
        },
        series,
        marks: window_marks(trial),
    }
    .to_svg()
}

fn latency_plot(name: &str, trial: &Trial) -> String {
    let pick = |q: fn(&crate::results::behaviour::Second) -> Option<f64>, label: &str| Series {
        name: label.into(),
        points: trial
            .seconds
            .iter()
            .filter_map(|s| q(s).map(|v| (s.second as f64, v.max(0.001))))
            .collect(),
    };
    LinePlot {
        title: format!("{name}: the client's latency from the intended send, second by second"),
        x: Axis {
            label: "second of the trial".into(),
            ..Axis::default()
        },
        y: Axis {
            label: "latency (ms, log scale)".into(),
            log: true,
            ticks: Vec::new(),
        },
        series: vec![pick(|s| s.p50_ms, "p50"), pick(|s| s.p99_ms, "p99")],
        marks: window_marks(trial),
    }
    .to_svg()
}

/// The page.
pub fn behaviour_page(result: &BehaviourResult) -> String {
    let mut body = meta(
        "",
        &result.envelope,
        "",
        &verdict(result.valid, &result.invalid_reasons),
    );
    body.push_str(&table_html(&figures_table(result)));
    for g in &result.gateways {
        if let Some(trial) = g.trials.last() {
            body.push_str(&format!("<h2>{}</h2>", escape(&g.name)));
            body.push_str(&figure(share_plot(&g.name, trial)));
            body.push_str(&figure(latency_plot(&g.name, trial)));
            body.push_str(&table_html(&timeline_table(trial)));
        }
    }
    body.push_str(&format!("<pre>{}</pre>", escape(&markdown(result))));
    page(&format!("Gateway behaviour: {}", result.scenario), &body)
}
