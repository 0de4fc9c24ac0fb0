//! What the reports read back from a `loadgen compare` result file (schema
//! `gatebench.loadgen.compare/1`).

use serde::Deserialize;

use super::compare::{delta_table, summary_table};
use crate::results::compare::{PercentileDelta, TargetSummary};
use crate::results::target::Named;

use super::run_view::{MetricView, RunRow};
use super::table::Table;

#[derive(Debug, Deserialize)]
pub struct CompareView {
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    pub targets: Vec<Named>,
    pub trials: usize,
    pub runs: Vec<TrialRow>,
    pub summary: Vec<TargetSummary>,
    pub deltas: Vec<PercentileDelta>,
    /// Processes sampled with --sample-pid.
    #[serde(default)]
    pub resources: Vec<crate::results::resources::ResourceReport>,
    /// True when the second target is the twin (results before the twin: false).
    #[serde(default)]
    pub twin: bool,
    #[serde(default)]
    pub min_effect_us: f64,
    pub valid: bool,
    /// The direct upstream's configuration, when it is a gatebench mock.
    #[serde(default)]
    pub mock: Option<String>,
    #[serde(default)]
    pub invalid_reasons: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct TrialRow {
    pub trial: usize,
    pub name: String,
    pub run: RunRow,
}

/// One row per trial and target, numbers only (times in µs), for spreadsheets.
pub fn trials_csv(view: &CompareView) -> String {
    let mut table = Table::new(&[
        "trial",
        "target",
        "requests",
        "ok",
        "failed",
        "achieved_rate",
        "throughput",
        "p50_us",
        "p90_us",
        "p99_us",
        "p999_us",
        "max_us",
        "valid",
    ]);
    for r in &view.runs {
        let rt = r.run.metrics.get("response_time");
        let p = |f: fn(&MetricView) -> f64| rt.map_or_else(String::new, |m| f(m).to_string());
        table.push(vec![
            r.trial.to_string(),
            r.name.clone(),
            r.run.requests.to_string(),
            r.run.ok.to_string(),
            r.run.failed.to_string(),
            format!("{:.3}", r.run.achieved_rate),
            format!("{:.3}", r.run.throughput),
            p(|m| m.p50),
            p(|m| m.p90),
            p(|m| m.p99),
            p(|m| m.p999),
            p(|m| m.max),
            r.run.validity.valid.to_string(),
        ]);
    }
    table.to_csv()
}

/// How the verdicts are reached, in one paragraph.
pub fn method(view: &CompareView) -> String {
    let control = if view.twin {
        let twin = view
            .targets
            .iter()
            .find(|t| t.name.is_twin())
            .and_then(|t| t.info.clone())
            .unwrap_or_default();
        format!(
            "against the twin ({twin}), an A/A control with trials of its own, by Welch's t test \
             at the same percentile; the resolution is the farthest end of the twin's interval \
             from zero"
        )
    } else {
        "against zero (no twin)".to_string()
    };
    let floor = if view.min_effect_us > 0.0 {
        format!(
            ", at least --min-effect {}",
            crate::report::overhead::micros(view.min_effect_us)
        )
    } else {
        String::new()
    };
    format!(
        "Added latency is the mean over trials of gateway − direct at each percentile, with a 95% \
         t interval across trials, compared {control}{floor}. The p-values of every gateway and \
         percentile are adjusted together (Holm). A gateway 'adds latency' or is 'faster than \
         direct' only when the adjusted test says so and its interval lies beyond the resolution \
         on that side; otherwise it is within the resolution."
    )
}

/// A Markdown write-up: the seven-gateway table, the added latency per percentile, disclosure.
pub fn markdown(view: &CompareView) -> String {
    let mut out = format!(
        "# Gateway comparison under load\n\n{} alternating trial(s) per target (direct, then each gateway, repeated). Response times are corrected for coordinated omission. {}\n\n",
        view.trials,
        method(view)
    );
    out.push_str(&summary_table(&view.summary).to_markdown());
    out.push_str("\n## Added latency\n\n");
    out.push_str(&delta_table(&view.deltas).to_markdown());
    if !view.resources.is_empty() {
        out.push_str("\n## Sampled processes (`--sample-pid`)\n\n");
        out.push_str(&crate::report::resources::table(&view.resources).to_markdown());
    }
    out.push_str(&format!(
        "\n## Disclosure\n\n- Host: {}\n",
        crate::engine::disclose::host_line(&view.envelope.host, view.envelope.open_files.as_ref())
    ));
    for t in &view.targets {
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
        view.envelope.gatebench_version,
        view.envelope.started_at,
        crate::engine::disclose::shell_line(&view.envelope.command),
        if view.valid {
            "valid".to_string()
        } else {
            format!("invalid ({})", view.invalid_reasons.join("; "))
        }
    ));
    out.push_str(&crate::engine::disclose::mock_markdown(
        view.mock.as_deref(),
    ));
    out
}
