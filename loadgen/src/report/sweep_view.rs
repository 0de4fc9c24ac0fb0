//! What the reports read back from `loadgen sweep` (`gatebench.loadgen.sweep/1`) and
//! `loadgen ladder` (`gatebench.loadgen.ladder/1`) result files.

use serde::Deserialize;

use super::ladder::rungs_table;
use super::sweep::{headline_text, levels_table};
use crate::report::resources;
use crate::results::ladder::Rung;
use crate::results::resources::ResourceReport;
use crate::results::sweep::{Headline, Level};
use crate::results::target::Named;

use super::table::Table;

/// The parts of a result every report discloses.
#[derive(Debug, Deserialize)]
pub struct Disclosure {
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    pub targets: Vec<Named>,
    #[serde(default)]
    pub resources: Vec<ResourceReport>,
    pub valid: bool,
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
    /// The direct upstream's configuration, when it is a gatebench mock.
    #[serde(default)]
    pub mock: Option<String>,
}

impl Disclosure {
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "\n## Disclosure\n\n- Host: {}\n",
            crate::engine::disclose::host_line(
                &self.envelope.host,
                self.envelope.open_files.as_ref()
            )
        );
        for t in &self.targets {
            out.push_str(&format!(
                "- `{}`: {} → {}{}\n",
                t.name,
                t.target.url,
                t.target.resolved,
                t.disclosure()
                    .map(|i| format!(" ({i})"))
                    .unwrap_or_default()
            ));
        }
        out.push_str(&format!(
            "- gatebench {}, started {}\n- Command: `{}`\n- Verdict: {}\n",
            self.envelope.gatebench_version,
            self.envelope.started_at,
            crate::engine::disclose::shell_line(&self.envelope.command),
            if self.valid {
                "valid".to_string()
            } else {
                format!("invalid ({})", self.invalid_reasons.join("; "))
            }
        ));
        out.push_str(&crate::engine::disclose::mock_markdown(
            self.mock.as_deref(),
        ));
        if !self.resources.is_empty() {
            out.push_str("\n## Resources of the system under test\n\n");
            out.push_str(&resources::table(&self.resources).to_markdown());
        }
        out
    }
}

#[derive(Debug, Deserialize)]
pub struct SweepView {
    #[serde(flatten)]
    pub disclosure: Disclosure,
    pub trials: usize,
    pub level_kind: crate::options::LevelKind,
    #[serde(default)]
    pub exploratory: bool,
    pub floor_p99_us: f64,
    pub levels: Vec<Level>,
    pub headline: Vec<Headline>,
}

#[derive(Debug, Deserialize)]
pub struct LadderView {
    #[serde(flatten)]
    pub disclosure: Disclosure,
    pub rungs: Vec<Rung>,
}

pub fn sweep_markdown(view: &SweepView) -> String {
    let mut out = format!(
        "# Load sweep\n\nLevels of {}, {} trial(s) per level and target, alternating. A level whose direct p99 exceeds twice the single-client floor ({:.0} µs) is marked saturated and kept out of the headline. Added figures are means over trials ± half the 95% interval.\n\n",
        view.level_kind, view.trials, view.floor_p99_us
    );
    if view.exploratory {
        out.push_str(super::sweep::EXPLORATORY);
    }
    out.push_str(&levels_table(&view.levels).to_markdown());
    out.push_str(&headline_text(&view.headline));
    out.push_str(&view.disclosure.markdown());
    out
}

/// Numbers only: one row per level and target.
pub fn sweep_csv(view: &SweepView) -> String {
    let mut table = Table::new(&[
        "level",
        "target",
        "requests",
        "ok",
        "throughput",
        "p50_us",
        "p90_us",
        "p99_us",
        "p999_us",
        "added_p50_us",
        "added_p99_us",
        "baseline_saturated",
    ]);
    for level in &view.levels {
        for s in &level.summary {
            let added = |p: &str| {
                level
                    .delta(&s.name, p)
                    .and_then(|d| {
                        d.added_us
                            .map(|i| i.estimate)
                            .or(d.per_trial_us.first().copied())
                    })
                    .map_or_else(String::new, |v| format!("{v:.1}"))
            };
            table.push(vec![
                level.level.to_string(),
                s.name.to_string(),
                s.requests.to_string(),
                s.ok.to_string(),
                format!("{:.3}", s.throughput),
                format!("{:.1}", s.p50_us),
                format!("{:.1}", s.p90_us),
                format!("{:.1}", s.p99_us),
                format!("{:.1}", s.p999_us),
                added("p50"),
                added("p99"),
                level.baseline_saturated.to_string(),
            ]);
        }
    }
    table.to_csv()
}

pub fn ladder_markdown(view: &LadderView) -> String {
    let mut out = String::from("# Simultaneous streams (ladder)\n\nAt each level, N streams start at one instant; times are from that instant. `delivery` compares each gateway with the direct streams of the same level: output events per stream (re-chunked) and the spread from first to last output (buffered).\n\n");
    out.push_str(&rungs_table(&view.rungs).to_markdown());
    out.push_str(&view.disclosure.markdown());
    out
}

/// Numbers only: one row per level and target.
pub fn ladder_csv(view: &LadderView) -> String {
    let mut table = Table::new(&[
        "streams",
        "target",
        "completed",
        "failed",
        "ttft_p50_us",
        "ttft_p95_us",
        "e2e_p50_us",
        "e2e_p95_us",
        "chunks_p50",
        "spread_p50_us",
        "delivery",
    ]);
    for r in &view.rungs {
        table.push(vec![
            r.level.to_string(),
            r.name.to_string(),
            r.completed.to_string(),
            r.failed.to_string(),
            format!("{:.1}", r.ttft_p50_us),
            format!("{:.1}", r.ttft_p95_us),
            format!("{:.1}", r.e2e_p50_us),
            format!("{:.1}", r.e2e_p95_us),
            r.chunks_p50.to_string(),
            format!("{:.1}", r.spread_p50_us),
            r.delivery.clone(),
        ]);
    }
    table.to_csv()
}
