//! The memory part of a `loadgen profile --memory` result, shown: allocations and bytes per
//! request with their interval and what the source counts, memory at rest before and after,
//! growth, where the bytes went (flame graphs by bytes), and the modeled cost, labelled as one.

use super::table::Table;
use crate::report::flame::{self, Kind};
use crate::results::cost::CostModel;
use crate::results::memory::{MemoryProfile, RestMemory};
use gatebench_shared::stats::Interval;

/// Functions listed under each flame graph.
const TOP: usize = 15;

/// `estimate [low, high]`, or the point alone from one trial.
fn interval(i: &Option<Interval>, digits: usize) -> String {
    match i {
        None => "-".into(),
        Some(i) if i.confidence == 0.0 => format!("{:.digits$} (one trial)", i.estimate),
        Some(i) => format!(
            "{:.digits$} [{:.digits$}, {:.digits$}]",
            i.estimate, i.low, i.high
        ),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn rest(r: &Option<RestMemory>) -> String {
    r.map_or("-".into(), |r| {
        format!(
            "{} (±{:.0} KiB)",
            mib(r.median_rss_bytes),
            (r.max_rss_bytes - r.min_rss_bytes) as f64 / 2048.0
        )
    })
}

/// The figures per request, with their source.
pub fn figures_table(m: &MemoryProfile) -> Table {
    let mut t = Table::new(&["figure", "per request (95% interval across trials)"]);
    t.push(vec![
        "allocs_per_request".into(),
        interval(&m.allocs_per_request, 1),
    ]);
    t.push(vec![
        "bytes_per_request".into(),
        interval(&m.bytes_per_request, 0),
    ]);
    if m.frees_per_request.is_some() {
        t.push(vec![
            "frees_per_request".into(),
            interval(&m.frees_per_request, 1),
        ]);
    }
    if m.loadgen_allocs_per_request.is_some() {
        t.push(vec![
            "loadgen's workers' allocs (they share the probes)".into(),
            interval(&m.loadgen_allocs_per_request, 1),
        ]);
    }
    t
}

/// Memory at rest and under load, trial by trial, each labelled.
pub fn trials_table(m: &MemoryProfile) -> Table {
    let mut t = Table::new(&[
        "trial",
        "requests",
        "allocs",
        "bytes",
        "live at window end",
        "RSS at rest before",
        "RSS at rest after",
    ]);
    for tr in &m.trials {
        t.push(vec![
            tr.trial.to_string(),
            tr.requests.to_string(),
            if tr.counted {
                format!("{:.0}", tr.allocs)
            } else {
                "not counted".into()
            },
            format!("{:.0}", tr.bytes),
            tr.live_at_end_bytes
                .map_or("-".into(), |b| format!("{b:.0} B")),
            rest(&tr.rest_before),
            rest(&tr.rest_after),
        ]);
    }
    t
}

/// One line naming the source and what it counts.
pub fn source_line(m: &MemoryProfile) -> String {
    match &m.source {
        Some(source) => format!(
            "source: {source} ({}), {}; processes {:?}",
            m.tool.as_deref().unwrap_or("-"),
            m.counts,
            m.processes
        ),
        None => "source: none".into(),
    }
}

/// The growth sentence.
pub fn growth_line(m: &MemoryProfile) -> Option<String> {
    let g = m.growth?;
    let kib = |b: i64| b as f64 / 1024.0;
    let warm = format!(
        "the first trial took {:+.0} KiB (warming)",
        kib(g.first_trial_growth_bytes)
    );
    Some(if g.flagged {
        format!(
            "memory at rest GREW from trial to trial: {:+.0} KiB from after the first to after \
             the last, beyond the {:.0} KiB noise of its rest samples: {:+.1} bytes per request \
             stayed; {warm}",
            kib(g.rest_growth_bytes),
            g.noise_bytes as f64 / 1024.0,
            g.bytes_per_request
        )
    } else {
        format!(
            "memory at rest held from trial to trial: {:+.0} KiB from after the first to after \
             the last, within the {:.0} KiB noise of its rest samples; {warm}",
            kib(g.rest_growth_bytes),
            g.noise_bytes as f64 / 1024.0
        )
    })
}

/// The terminal section.
pub fn terminal(m: &MemoryProfile, cost: Option<&CostModel>) -> String {
    let mut out = format!("\nMemory ({}):\n", source_line(m));
    out.push_str(&figures_table(m).to_text());
    out.push_str(&trials_table(m).to_text());
    if let Some(line) = growth_line(m) {
        out.push_str(&format!("{line}\n"));
    }
    for reason in &m.unavailable {
        out.push_str(&format!("  {reason}\n"));
    }
    if let Some(a) = m.allocated.as_ref().filter(|f| !f.is_empty()) {
        out.push_str(&format!(
            "\nWhere the bytes go (allocated in the windows):\n{}",
            super::stacks::top_table(a, 10).to_text()
        ));
    }
    if let Some(c) = cost {
        out.push_str(&format!("\ncost: {}\n", c.describe()));
    }
    for file in &m.files {
        out.push_str(&format!("written: {file}\n"));
    }
    out
}

/// The Markdown section.
pub fn markdown(m: &MemoryProfile, cost: Option<&CostModel>) -> String {
    let mut out = format!("## Memory\n\n{}.\n\n", source_line(m));
    out.push_str(&figures_table(m).to_markdown());
    out.push('\n');
    out.push_str(&trials_table(m).to_markdown());
    if let Some(line) = growth_line(m) {
        out.push_str(&format!("\n{line}.\n"));
    }
    for reason in &m.unavailable {
        out.push_str(&format!("- **{reason}**\n"));
    }
    if let Some(a) = &m.allocated {
        out.push_str("\n### Where the bytes go (allocated)\n\n");
        out.push_str(&super::stacks::top_table(a, TOP).to_markdown());
    }
    if let Some(c) = cost {
        out.push_str(&format!("\n**Cost, modeled:** {}\n", c.describe()));
    }
    out
}

/// The HTML section: the figures, the flame graphs by bytes, the cost.
pub fn html(m: &MemoryProfile, cost: Option<&CostModel>) -> String {
    let esc = crate::report::svg::escape;
    let mut body = format!("<h2>Memory</h2><p>{}.</p>", esc(&source_line(m)));
    body.push_str(&super::html::table_html(&figures_table(m)));
    body.push_str(&super::html::table_html(&trials_table(m)));
    if let Some(line) = growth_line(m) {
        body.push_str(&format!("<p><b>{}</b></p>", esc(&line)));
    }
    for reason in &m.unavailable {
        body.push_str(&format!("<p><b>{}</b></p>", esc(reason)));
    }
    for (name, title, folded) in [
        ("allocated", "Bytes allocated, by stack", &m.allocated),
        (
            "live",
            "Bytes still live at the windows' ends, by stack",
            &m.live,
        ),
    ] {
        let Some(folded) = folded.as_ref().filter(|f| !f.is_empty()) else {
            continue;
        };
        body.push_str(&format!("<h2>{title}</h2>"));
        if let Some(svg) = flame_of(m, name) {
            body.push_str(&format!(
                "<div class=\"figure\">{}</div>",
                flame::inline(&svg)
            ));
        }
        body.push_str(&super::html::table_html(&super::stacks::top_table(
            folded, TOP,
        )));
    }
    if let Some(c) = cost {
        body.push_str(&format!(
            "<h2>Cost (modeled)</h2><p>{}</p>",
            esc(&c.describe())
        ));
    }
    body
}

/// The flame graph of the `allocated` or `live` stacks.
pub fn flame_of(m: &MemoryProfile, name: &str) -> Option<String> {
    let (folded, what) = match name {
        "allocated" => (
            m.allocated.as_ref()?,
            "bytes allocated in the probed windows",
        ),
        "live" => (
            m.live.as_ref()?,
            "bytes allocated in the windows and live at their ends",
        ),
        _ => return None,
    };
    let title = format!("{}: {name}", m.source.as_deref().unwrap_or("memory"));
    let subtitle = format!("{} {what}, by stack", folded.total());
    flame::flame_graph(folded, &title, &subtitle, Kind::Bytes)
}
