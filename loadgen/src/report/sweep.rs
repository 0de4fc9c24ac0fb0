//! A `loadgen sweep` result (schema `gatebench.loadgen.sweep/1`) as its levels table, headline,
//! terminal report, CSV and Markdown.

use super::disclosure::Disclosure;
use super::format::micros;
use super::table::Table;
use crate::model::target::Named;
use crate::results::envelope::Envelope;
use crate::results::resources::ResourceReport;
use crate::results::sweep::{Headline, Level, SweepResult};

/// Per level and target: throughput, p50, p99, errors, added p50 and p99, and the flag.
pub fn levels_table(levels: &[Level]) -> Table {
    let mut table = Table::new(&[
        "level",
        "target",
        "throughput (req/s)",
        "success",
        "P50",
        "P99",
        "added P50",
        "added P99",
        "P99 verdict",
        "baseline",
    ]);
    for level in levels {
        for s in &level.summary {
            let added = |p: &str| {
                level.delta(&s.name, p).map_or_else(
                    || "-".to_string(),
                    |d| {
                        let v = d.added_us.map_or_else(
                            || d.per_trial_us.first().copied().unwrap_or(f64::NAN),
                            |i| i.estimate,
                        );
                        let interval = d
                            .added_us
                            .map(|i| format!(" ±{}", micros((i.high - i.low) / 2.0)))
                            .unwrap_or_default();
                        format!("{}{interval}", micros(v))
                    },
                )
            };
            table.push(vec![
                level.level.to_string(),
                s.name.to_string(),
                format!("{:.1}", s.throughput),
                format!("{:.2}%", s.success_rate * 100.0),
                micros(s.p50_us),
                micros(s.p99_us),
                added("p50"),
                added("p99"),
                level
                    .delta(&s.name, "p99")
                    .map_or_else(|| "-".to_string(), |d| d.verdict()),
                if level.baseline_saturated {
                    "saturated".into()
                } else {
                    "ok".into()
                },
            ]);
        }
    }
    table
}

/// What a concurrency sweep's reports say about it.
pub const EXPLORATORY: &str = "Exploratory: closed-loop levels (each request waits for the one before it), so latencies are not corrected for coordinated omission; use rate levels (--level-kind rate) for figures to publish.\n\n";

/// The terminal report: every level, then the headline.
pub fn terminal(result: &SweepResult) -> String {
    let mut out = format!(
        "loadgen sweep: {} levels ({}), {} trial(s) per level and target; single-client floor p99 {}\n\n",
        result.levels.len(),
        result.level_kind,
        result.header.trials,
        micros(result.floor_p99_us)
    );
    if result.exploratory {
        out.push_str(EXPLORATORY);
    }
    out.push_str(&levels_table(&result.levels).to_text());
    out.push_str(&headline_text(&result.headline));
    out.push_str(&format!("{}\n", source(result)));
    out.push_str(&super::terminal::closing(
        &result.footer.resources,
        result.footer.valid,
        &result.footer.invalid_reasons,
    ));
    out
}

/// How the resolution was obtained, in one sentence.
pub fn source(view: &SweepResult) -> String {
    super::format::resolution_from(
        &view.header.resolution_source,
        &view.header.targets,
        view.header.twin,
    )
}

/// The headline in words.
pub fn headline_text(headline: &[Headline]) -> String {
    if headline.is_empty() {
        return "\nno level with an unsaturated baseline: no headline figure\n".into();
    }
    let mut out = String::from("\nheadline (highest level with an unsaturated baseline):\n");
    for h in headline {
        out.push_str(&format!(
            "  {} at {}: adds {} at p50, {} at p99\n",
            h.gateway,
            h.level,
            micros(h.added_p50_us),
            micros(h.added_p99_us)
        ));
    }
    out
}

/// A Markdown write-up: the levels, the headline, the disclosure.
pub fn sweep_markdown(view: &SweepResult) -> String {
    let mut out = format!(
        "# Load sweep\n\nLevels of {}, {} trial(s) per level and target, alternating. A level whose direct p99 exceeds twice the single-client floor ({:.0} µs) is marked saturated and kept out of the headline. Added figures are means over trials ± half the 95% interval.\n\n",
        view.level_kind, view.header.trials, view.floor_p99_us
    );
    if view.exploratory {
        out.push_str(super::sweep::EXPLORATORY);
    }
    out.push_str(&levels_table(&view.levels).to_markdown());
    out.push_str(&headline_text(&view.headline));
    out.push_str(&format!("\n{}\n", source(view)));
    out.push_str(&disclosure(
        &view.envelope,
        &view.header.targets,
        (view.footer.valid, &view.footer.invalid_reasons),
        view.header.mock.as_deref(),
        &view.footer.resources,
    ));
    out
}

/// Numbers only: one row per level and target.
pub fn sweep_csv(view: &SweepResult) -> String {
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

/// The disclosure of a sweep or a ladder, the sampled processes after it.
pub(crate) fn disclosure(
    envelope: &Envelope,
    targets: &[Named],
    verdict: (bool, &[String]),
    mock: Option<&str>,
    resources: &[ResourceReport],
) -> String {
    let mut out = Disclosure {
        targets,
        verdict: Some(verdict),
        mock,
        ..Disclosure::of(envelope)
    }
    .markdown();
    if !resources.is_empty() {
        out.push_str("\n## Resources of the system under test\n\n");
        out.push_str(&super::resources::table(resources).to_markdown());
    }
    out
}
