//! A `loadgen profile` result (schema `gatebench.loadgen.profile/1`) read back and shown: the
//! flame graphs beside the latency, the added latency, the profiler's own cost, the gateway's
//! CPU and memory and the disclosure; in the terminal, Markdown and one HTML page.

use super::compare::delta_table;
use super::format::signed;
use super::html::{compare_body, page, table_html};
pub use super::stacks::{top_table, waits_table};
use crate::report::flame::{self, Kind};
use crate::results::compare::PercentileDelta;
use crate::results::profile::{Profile, ProfileResult};

/// Functions listed under each flame graph.
const TOP: usize = 15;

impl ProfileResult {
    /// The sampled runs' throughput, P50, P99 and P99.9, and the unsampled runs' added P50 and
    /// P99 (with interval) when there was a direct upstream.
    pub fn latency_cells(&self) -> Vec<String> {
        let mut cells = match self
            .compare
            .summary
            .iter()
            .find(|s| s.name == self.profile.sampled_target)
        {
            Some(s) => vec![
                format!("{:.1}", s.throughput),
                super::format::micros(s.p50_us),
                super::format::micros(s.p99_us),
                super::format::micros(s.p999_us),
            ],
            None => vec!["-".into(); 4],
        };
        for percentile in ["p50", "p99"] {
            cells.push(added(
                &self.compare.deltas,
                &self.profile.gateway,
                percentile,
            ));
        }
        cells
    }
}

/// A gateway's added latency at `percentile`, `+30 µs [+21, +39]`, or `-`.
fn added(
    deltas: &[PercentileDelta],
    gateway: &crate::model::role::Role,
    percentile: &str,
) -> String {
    deltas
        .iter()
        .find(|d| d.gateway == *gateway && d.percentile == percentile)
        .and_then(|d| d.added_us)
        .map_or_else(
            || "-".into(),
            |i| {
                format!(
                    "{} [{}, {}]",
                    signed(i.estimate),
                    signed(i.low),
                    signed(i.high)
                )
            },
        )
}

/// Reads a profile result file.
pub fn read(path: &std::path::Path) -> anyhow::Result<ProfileResult> {
    let text = std::fs::read(path)?;
    Ok(serde_json::from_slice(&text)?)
}

/// When sampling changed the gateway's latency beyond the resolution, a sentence saying so:
/// the sampled runs' figures are then not the gateway's own.
pub fn cost_warning(cost: &[PercentileDelta]) -> Option<String> {
    let moved: Vec<String> = cost
        .iter()
        .filter(|d| d.verdict() == "adds latency")
        .filter_map(|d| Some(format!("{} {}", d.percentile, signed(d.added_us?.estimate))))
        .collect();
    (!moved.is_empty()).then(|| {
        format!(
            "Sampling added latency beyond the resolution ({}): the sampled runs' percentiles \
             are not the gateway's own (its unsampled runs are). --off-cpu off or a lower \
             --frequency costs less (with --memory: --live off).",
            moved.join(", ")
        )
    })
}

/// One line on what was sampled, how, and for how long.
pub fn sampled_line(p: &Profile) -> String {
    let processes = match p.processes.len() {
        0 => format!("pid {}", p.pid),
        1 => format!("pid {}", p.processes[0]),
        n => format!("pid {} and {} processes under it", p.pid, n - 1),
    };
    format!(
        "{} ({processes}) sampled by {} at {} Hz, {} stacks, in {} window(s) after the warm-up ({:.1} s recorded){}",
        p.gateway,
        p.perf.as_deref().unwrap_or("perf (did not run)"),
        p.frequency_hz,
        p.call_graph.name(),
        p.windows,
        p.recorded_s,
        match (&p.on_cpu, &p.off_cpu) {
            (Some(on), Some(off)) => format!(
                ": {} on-CPU samples, {:.1} ms off-CPU",
                on.total(),
                off.total() as f64 / 1e3
            ),
            (Some(on), None) => format!(": {} on-CPU samples, no off-CPU", on.total()),
            _ => String::new(),
        }
    )
}

/// The terminal report of `loadgen profile`: the comparison's tables, the profiler's cost, the
/// functions holding the most time, and where the flame graphs are.
pub fn terminal(result: &ProfileResult) -> String {
    let p = &result.profile;
    let mut out = super::compare::terminal(&result.compare).replacen(
        "loadgen compare:",
        "loadgen profile:",
        1,
    );
    if !result.profiler_cost.is_empty() {
        out.push_str(&format!(
            "\nProfiler cost ({} against {} without sampling):\n{}",
            p.sampled_target,
            p.gateway,
            delta_table(&result.profiler_cost).to_text()
        ));
    }
    if let Some(warning) = cost_warning(&result.profiler_cost) {
        out.push_str(&format!("{warning}\n"));
    }
    if let Some(m) = &result.memory {
        out.push_str(&super::memory::terminal(m, result.cost_model.as_ref()));
        return out;
    }
    out.push_str(&format!("\n{}\n", sampled_line(p)));
    for reason in &p.unavailable {
        out.push_str(&format!("  {reason}\n"));
    }
    if let Some(on) = p.on_cpu.as_ref().filter(|f| !f.is_empty()) {
        out.push_str(&format!(
            "\nOn-CPU, where the time goes:\n{}",
            top_table(on, 10).to_text()
        ));
    }
    if let Some(off) = p.off_cpu.as_ref().filter(|f| !f.is_empty()) {
        out.push_str(&format!(
            "\nOff-CPU, where the threads wait:\n{}",
            waits_table(off, 5).to_text()
        ));
    }
    for file in &p.files {
        out.push_str(&format!("written: {file}\n"));
    }
    if !p.files.is_empty() {
        out.push_str(
            "the page with both beside the latency: loadgen report RESULT.json --format html\n",
        );
    }
    out
}

/// A Markdown write-up: the profile's top functions, the cost, then the comparison's tables.
pub fn markdown(view: &ProfileResult) -> String {
    let p = &view.profile;
    let mut out = match &view.memory {
        Some(m) => format!(
            "# Memory of {} under load\n\n{}",
            p.gateway,
            super::memory::markdown(m, view.cost_model.as_ref())
        ),
        None => format!(
            "# Profile of {} under load\n\n{}.\n\n",
            p.gateway,
            sampled_line(p)
        ),
    };
    for reason in &p.unavailable {
        out.push_str(&format!("- **{reason}**\n"));
    }
    if let Some(on) = &p.on_cpu {
        out.push_str("\n## On-CPU: functions holding the most samples\n\n");
        out.push_str(&top_table(on, TOP).to_markdown());
    }
    if let Some(off) = &p.off_cpu {
        out.push_str("\n## Off-CPU: where the threads waited\n\n");
        out.push_str(&waits_table(off, TOP).to_markdown());
    }
    out.push_str("\n## The profiler's cost (sampled against unsampled runs)\n\n");
    out.push_str(&delta_table(&view.profiler_cost).to_markdown());
    if let Some(warning) = cost_warning(&view.profiler_cost) {
        out.push_str(&format!("\n**{warning}**\n"));
    }
    out.push('\n');
    out.push_str(&super::compare::markdown(&view.compare).replacen(
        "# Gateway comparison under load",
        "## Latency under the same load",
        1,
    ));
    out
}

/// The HTML page: the flame graphs, the functions under them, the profiler's cost, then the
/// comparison's page (latency, added latency, CPU and memory, disclosure).
pub fn html(view: &ProfileResult) -> String {
    let p = &view.profile;
    let mut body = match &view.memory {
        Some(m) => super::memory::html(m, view.cost_model.as_ref()),
        None => format!("<p>{}.</p>", crate::report::svg::escape(&sampled_line(p))),
    };
    for reason in &p.unavailable {
        body.push_str(&format!(
            "<p><b>{}</b></p>",
            crate::report::svg::escape(reason)
        ));
    }
    let graphs = [
        (Kind::OnCpu, "On-CPU flame graph"),
        (Kind::OffCpu, "Off-CPU flame graph"),
    ];
    for (kind, title) in graphs {
        let Some(folded) = p.stacks(kind) else {
            continue;
        };
        body.push_str(&format!("<h2>{title}</h2>"));
        match flame::of_profile(p, kind) {
            Some(svg) => {
                body.push_str(&format!(
                    "<div class=\"figure\">{}</div>",
                    flame::inline(&svg)
                ));
                body.push_str(&table_html(&match kind {
                    Kind::OnCpu => top_table(folded, TOP),
                    Kind::OffCpu => waits_table(folded, TOP),
                    Kind::Bytes => top_table(folded, TOP),
                }));
            }
            None => body.push_str("<p>No stacks were recorded.</p>"),
        }
    }
    body.push_str("<h2>The profiler's cost</h2><p>The sampled runs against the unsampled runs of the same gateway, in the same trials: what sampling added at each percentile.</p>");
    body.push_str(&table_html(&delta_table(&view.profiler_cost)));
    if let Some(warning) = cost_warning(&view.profiler_cost) {
        body.push_str(&format!(
            "<p><b>{}</b></p>",
            crate::report::svg::escape(&warning)
        ));
    }
    body.push_str("<h2>Latency under the same load</h2>");
    body.push_str(&compare_body(&view.compare));
    page(&format!("Profile of {} under load", p.gateway), &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatebench_shared::stats::Interval;

    fn row(percentile: &str, verdict: &str, estimate: f64) -> PercentileDelta {
        PercentileDelta {
            gateway: "gw+perf".into(),
            percentile: percentile.into(),
            per_trial_us: vec![estimate; 3],
            added_us: Some(Interval {
                estimate,
                low: estimate - 10.0,
                high: estimate + 10.0,
                confidence: 0.95,
            }),
            p_adjusted: Some(0.01),
            resolution_us: 5.0,
            control: false,
            verdict: verdict.into(),
        }
    }

    #[test]
    fn a_profiler_that_moved_the_latency_is_called_out() {
        let quiet = [row("p50", "within the resolution (±5 µs)", 2.0)];
        assert_eq!(cost_warning(&quiet), None);
        let loud = [quiet[0].clone(), row("p99", "adds latency", 1470.0)];
        let warning = cost_warning(&loud).unwrap();
        assert!(
            warning.contains("p99 +1.47 ms") && warning.contains("--off-cpu off"),
            "{warning}"
        );
    }
}
