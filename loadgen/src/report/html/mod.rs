//! Self-contained HTML reports: tables and inline SVG plots in one file, with no script and no
//! external resource, so the page opens anywhere, offline. One module per kind of result's page
//! (`run` with its `sessions`, `compare`, `overhead`, and `levels` for sweep, ladder and
//! capacity); here the page itself and the parts every page shares: tables, figures, axes, the
//! line atop, the sampled processes and the upstream.

mod behaviour;
mod compare;
mod levels;
mod overhead;
mod run;
mod sessions;

pub use behaviour::behaviour_page;
pub(crate) use compare::compare_body;
pub use compare::compare_page;
pub use levels::{capacity_page, ladder_page, sweep_page};
pub use overhead::overhead_page;
pub use run::run_page;

use gatebench_shared::stats::quantile_of_sorted;

use super::svg::{escape, Axis, LinePlot, Series};
use super::table::Table;
use crate::report::disclosure::{host_line, shell_line};
use crate::results::envelope::Envelope;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}\
td{text-align:right}td:first-child{text-align:left}th{background:#f3f3f3}\
.figure{margin:1.5em 0}.pair{display:flex;gap:1em}.pair .figure{flex:1}.pair svg{width:100%;height:auto}.meta{color:#555;font-size:13px}code{background:#f3f3f3;padding:1px 3px}";

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

/// The line atop a page: `lead`, when and where the result was measured, the build and the
/// command line, `note`, and `verdict` (already escaped).
fn meta(lead: &str, envelope: &Envelope, note: &str, verdict: &str) -> String {
    format!(
        "<p class=\"meta\">{lead}{} on {}; gatebench {}, <code>{}</code>.{note} Verdict: <b>{verdict}</b>.</p>",
        escape(&envelope.started_at),
        escape(&host_line(&envelope.host, envelope.open_files.as_ref())),
        escape(&envelope.gatebench_version),
        escape(&shell_line(&envelope.command)),
    )
}

/// `valid`, or `invalid: ` and the reasons, escaped.
fn verdict(valid: bool, reasons: &[String]) -> String {
    if valid {
        "valid".to_string()
    } else {
        escape(&format!("invalid: {}", reasons.join("; ")))
    }
}
