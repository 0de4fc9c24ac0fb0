//! `loadgen report --combine A.json B.json …`: many `loadgen compare` results (one per
//! gateway, each with its own direct baseline and twin) as one table, in the columns of the
//! published seven-gateway benchmark (requests, throughput, success, P50, P99, P99.9) and what
//! gatebench adds beside them: the added latency with its interval and verdict against that
//! file's own direct run, the gateway's CPU and peak memory, and what was disclosed of it.

use std::path::PathBuf;

use anyhow::bail;

use super::compare::published_cells;
use super::format::{micros, signed};
use super::table::Table;
use crate::model::target::Named;
use crate::results::compare::CompareResult;
use crate::results::compare::{PercentileDelta, TargetSummary};

/// One gateway's row, from the file it was measured in.
#[derive(Debug)]
struct Row<'a> {
    summary: &'a TargetSummary,
    named: Option<&'a Named>,
    p50: Option<&'a PercentileDelta>,
    p99: Option<&'a PercentileDelta>,
    resources: Option<&'a crate::results::resources::ResourceReport>,
}

/// The results to combine, read and checked: every one a `loadgen compare` result.
pub fn read(paths: &[PathBuf]) -> anyhow::Result<Vec<(String, CompareResult)>> {
    if paths.is_empty() {
        bail!("--combine needs at least one `loadgen compare` result file");
    }
    let mut views = Vec::new();
    for path in paths {
        let schema = super::render::schema_of(path)?;
        if schema != crate::results::compare::SCHEMA {
            bail!(
                "--combine takes `loadgen compare` results (the constant-rate table, one per \
                 gateway); {} is a {schema} result",
                path.display()
            );
        }
        match super::render::read(path)? {
            super::render::Result::Compare(view, _) => views.push((file_name(path), *view)),
            _ => bail!(
                "--combine takes `loadgen compare` results (the constant-rate table, one per \
                 gateway); {} is another kind",
                path.display()
            ),
        }
    }
    Ok(views)
}

fn file_name(path: &std::path::Path) -> String {
    path.display().to_string()
}

fn rows(views: &[(String, CompareResult)]) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    for (_, view) in views {
        for summary in &view.summary {
            if !summary.name.is_gateway() {
                continue;
            }
            let delta = |p: &str| {
                view.deltas
                    .iter()
                    .find(|d| d.gateway == summary.name && d.percentile == p)
            };
            rows.push(Row {
                summary,
                named: view.header.targets.iter().find(|t| t.name == summary.name),
                p50: delta("p50"),
                p99: delta("p99"),
                resources: view
                    .footer
                    .resources
                    .iter()
                    .find(|r| r.name == summary.name.as_str()),
            });
        }
    }
    rows
}

fn added(delta: Option<&PercentileDelta>) -> String {
    match delta.and_then(|d| d.added_us.map(|i| (d, i))) {
        Some((d, i)) => format!(
            "{} [{}, {}] {}",
            signed(i.estimate),
            signed(i.low),
            signed(i.high),
            short_verdict(&d.verdict())
        ),
        None => "-".into(),
    }
}

/// The verdict in a word or two, for a table cell.
fn short_verdict(verdict: &str) -> &'static str {
    if verdict.starts_with("adds") {
        "(adds)"
    } else if verdict.starts_with("faster") {
        "(faster)"
    } else if verdict.starts_with("within") {
        "(within resolution)"
    } else {
        "(not distinguishable)"
    }
}

/// The combined table: the direct upstream (from the first file), then every gateway.
pub fn table(views: &[(String, CompareResult)]) -> Table {
    let mut table = Table::new(&[
        "gateway",
        "requests",
        "throughput (req/s)",
        "success",
        "P50",
        "P99",
        "P99.9",
        "added P50 [95%]",
        "added P99 [95%]",
        "CPU (cores, mean)",
        "peak RSS",
        "recording",
        "version and settings",
    ]);
    if let Some(direct) = views
        .first()
        .and_then(|(_, v)| v.summary.iter().find(|s| s.name.is_direct()))
    {
        let mut row = vec!["direct (no gateway)".to_string()];
        row.extend(published_cells(direct));
        row.extend(["-", "-", "-", "-", "-", "the mock"].map(String::from));
        table.push(row);
    }
    for r in rows(views) {
        let mut row = vec![r.summary.name.to_string()];
        row.extend(published_cells(r.summary));
        row.push(added(r.p50));
        row.push(added(r.p99));
        row.push(
            r.resources
                .map_or_else(|| "-".into(), |s| format!("{:.2}", s.load_cpu_cores_mean)),
        );
        row.push(r.resources.map_or_else(
            || "-".into(),
            |s| format!("{:.1} MiB", s.load_rss_peak_bytes as f64 / (1 << 20) as f64),
        ));
        row.push(
            r.named
                .and_then(|n| n.recording)
                .map_or_else(|| "not declared".into(), |level| level.to_string()),
        );
        row.push(r.named.and_then(|n| n.info.clone()).unwrap_or_default());
        table.push(row);
    }
    table
}

/// How the table was made, under it.
fn notes(views: &[(String, CompareResult)]) -> Vec<String> {
    let mut notes = vec![
        "Each gateway's added latency is the mean over its file's alternating trials of \
         gateway − direct, with a 95% t interval, against the direct upstream measured in the \
         same file (its own baseline and twin); the verdict is that file's. Response times are \
         corrected for coordinated omission."
            .to_string(),
    ];
    for (file, view) in views {
        let direct = view.summary.iter().find(|s| s.name.is_direct());
        let plan = &view.envelope;
        notes.push(format!(
            "{file}: {} trial(s), started {}, direct P50 {} P99 {}; {}{}",
            view.header.trials,
            plan.started_at,
            direct.map_or_else(|| "-".into(), |d| micros(d.p50_us)),
            direct.map_or_else(|| "-".into(), |d| micros(d.p99_us)),
            super::compare::source(view).trim_end_matches('.').replacen(
                "Resolution",
                "resolution",
                1
            ),
            if view.footer.valid {
                String::new()
            } else {
                format!("; not valid: {}", view.footer.invalid_reasons.join("; "))
            }
        ));
    }
    notes
}

/// The combined table in Markdown, with its notes and the host of the first file.
pub fn markdown(views: &[(String, CompareResult)]) -> String {
    let mut out = String::from("# Gateways side by side\n\n");
    out.push_str(&table(views).to_markdown());
    out.push('\n');
    for note in notes(views) {
        out.push_str(&format!("- {note}\n"));
    }
    if let Some((_, first)) = views.first() {
        out.push_str(&format!(
            "- Host: {}\n",
            crate::report::disclosure::host_line(
                &first.envelope.host,
                first.envelope.open_files.as_ref()
            )
        ));
    }
    out
}

/// The combined table as one self-contained HTML page.
pub fn html(views: &[(String, CompareResult)]) -> String {
    let mut body = super::html::table_html(&table(views));
    body.push_str("<ul>");
    for note in notes(views) {
        body.push_str(&format!("<li>{}</li>", super::svg::escape(&note)));
    }
    body.push_str("</ul>");
    super::html::page("Gateways side by side", &body)
}

/// The combined table as CSV.
pub fn csv(views: &[(String, CompareResult)]) -> String {
    table(views).to_csv()
}
