//! A `loadgen run` result (schema `gatebench.loadgen.result/1`, merged or not) as tables, CSV
//! and Markdown.

use super::disclosure::Disclosure;
use super::format::micros;
use super::table::Table;
use crate::results::metric::Summary;
use crate::results::run::RunResult;
use crate::results::shards::Shards;

/// Each run's classes and stages, one table per run that has either.
pub fn groups_tables(view: &RunResult) -> Vec<(String, Table)> {
    let mut out = Vec::new();
    for run in &view.runs {
        for (kind, groups) in [("class", &run.classes), ("stage", &run.stages)] {
            if groups.is_empty() {
                continue;
            }
            let mut table = Table::new(&[
                kind,
                "planned (req/s)",
                "got (req/s)",
                "requests",
                "failed",
                "body (B)",
                "prompt (tokens)",
                "P50",
                "P99",
                "TTFT P99",
            ]);
            for g in groups {
                let rate = |r: Option<f64>| r.map_or_else(|| "-".into(), |r| format!("{r:.0}"));
                table.push(vec![
                    g.name.clone(),
                    g.stage.map_or_else(
                        || "-".into(),
                        |s| format!("{:.0} → {:.0}", s.from_rate, s.to_rate),
                    ),
                    rate(g.stage.map(|s| s.achieved_rate)),
                    g.requests.to_string(),
                    g.errors.to_string(),
                    format!("{:.0}", g.mean_body_bytes),
                    format!("{:.0}", g.mean_prompt_tokens),
                    micros(g.response_time.p50 as f64),
                    micros(g.response_time.p99 as f64),
                    g.ttft.map_or_else(|| "-".into(), |t| micros(t.p99 as f64)),
                ]);
            }
            let title = format!("{} ({}) by {kind}", run.target.url, run.scenario);
            out.push((title, table));
        }
    }
    out
}

/// The seven-gateway table: per target and scenario, requests, throughput, success and the
/// CO-corrected response-time percentiles.
pub fn runs_table(view: &RunResult) -> Table {
    let mut table = Table::new(&[
        "target",
        "scenario",
        "requests",
        "throughput (req/s)",
        "steady (req/s)",
        "success",
        "P50",
        "P99",
        "P99.9",
        "valid",
    ]);
    for run in &view.runs {
        let rt = run.metrics.get("response_time");
        let p = |f: fn(&Summary) -> u64| rt.map_or_else(|| "-".into(), |m| micros(f(m) as f64));
        table.push(vec![
            run.target.url.clone(),
            run.scenario_shown(),
            run.requests.to_string(),
            format!("{:.1}", run.throughput),
            run.steady_throughput
                .map_or_else(|| "-".into(), |t| format!("{t:.1}")),
            format!("{:.2}%", run.success_rate * 100.0),
            p(|m| m.p50),
            p(|m| m.p99),
            p(|m| m.p999),
            if run.validity.valid { "yes" } else { "no" }.into(),
        ]);
    }
    table
}

/// The runs as numbers for spreadsheets (times in µs).
pub fn runs_csv(view: &RunResult) -> String {
    let mut table = Table::new(&[
        "target",
        "scenario",
        "requests",
        "ok",
        "failed",
        "achieved_rate",
        "throughput",
        "steady_throughput",
        "success_rate",
        "p50_us",
        "p90_us",
        "p99_us",
        "p999_us",
        "max_us",
        "valid",
    ]);
    for run in &view.runs {
        let rt = run.metrics.get("response_time");
        let p = |f: fn(&Summary) -> u64| rt.map_or_else(String::new, |m| f(m).to_string());
        table.push(vec![
            run.target.url.clone(),
            run.scenario.clone(),
            run.requests.to_string(),
            run.ok.to_string(),
            run.failed.to_string(),
            format!("{:.3}", run.achieved_rate),
            format!("{:.3}", run.throughput),
            run.steady_throughput
                .map_or_else(String::new, |t| format!("{t:.3}")),
            format!("{:.6}", run.success_rate),
            p(|m| m.p50),
            p(|m| m.p90),
            p(|m| m.p99),
            p(|m| m.p999),
            p(|m| m.max),
            run.validity.valid.to_string(),
        ]);
    }
    table.to_csv()
}

/// A Markdown write-up of a run result.
pub fn markdown(view: &RunResult) -> String {
    let mut out = String::from("# Load run\n\nResponse times are corrected for coordinated omission (measured from each request's intended send time).\n\n");
    out.push_str(&runs_table(view).to_markdown());
    for run in &view.runs {
        if !run.errors.is_empty() || !run.validity.valid {
            out.push_str(&format!(
                "\n- {} ({}): errors {:?}{}\n",
                run.target.url,
                run.scenario,
                run.errors,
                if run.validity.valid {
                    String::new()
                } else {
                    format!("; invalid: {}", run.validity.reasons.join("; "))
                }
            ));
        }
    }
    for run in &view.runs {
        if let Some(line) = super::waiting::waiting_line(run) {
            out.push_str(&format!(
                "\n- {} ({}): {line}\n",
                run.target.url, run.scenario
            ));
        }
    }
    for (title, table) in groups_tables(view) {
        out.push_str(&format!("\n## {title}\n\n{}", table.to_markdown()));
    }
    for run in &view.runs {
        if let Some(sessions) = &run.sessions {
            let table = super::sessions::turns_table(sessions);
            out.push_str(&format!(
                "\n## {} ({}) by turn\n\n{}\n\n{}",
                run.target.url,
                run.scenario,
                super::sessions::summary_line(sessions),
                table.to_markdown()
            ));
            if let Some(table) = super::sessions::branch_table(sessions) {
                out.push_str(&format!(
                    "\n\nBranches (sub-agents):\n\n{}",
                    table.to_markdown()
                ));
            }
        }
    }
    if let Some(shards) = &view.shards {
        out.push_str(&shards_markdown(shards));
    }
    out.push_str(
        &Disclosure {
            runs: view
                .runs
                .iter()
                .map(|run| format!("Target {} → {}", run.target.url, run.target.resolved))
                .collect(),
            mock: view.mock.as_deref(),
            ..Disclosure::of(&view.envelope)
        }
        .markdown(),
    );
    out
}

/// The shards a merged result was added from: host, start, clock, share of the load.
pub fn shards_table(shards: &Shards) -> Table {
    let mut table = Table::new(&[
        "shard",
        "file",
        "host",
        "start error",
        "clock",
        "requests",
        "achieved (req/s)",
        "generator CPU",
        "valid",
    ]);
    for s in &shards.merged {
        let mut clock = match &s.clock.kernel {
            Some(k) if k.synchronized => format!("synchronised, max error {} µs", k.max_error_us),
            Some(_) => "not synchronised".into(),
            None => "unknown".into(),
        };
        if let Some(r) = &s.clock.reference {
            clock.push_str(&format!(
                "; {:+} ± {} µs from the reference",
                -r.offset_us, r.error_us
            ));
        }
        table.push(vec![
            format!("{}/{}", s.index, shards.count),
            s.file.clone(),
            format!("{} ({} cores)", s.host.hostname, s.host.cores),
            s.clock
                .start_error_us
                .map_or_else(|| "-".into(), |e| format!("{e:+} µs")),
            clock,
            s.requests.to_string(),
            format!("{:.1}", s.achieved_rate),
            format!("{:.2} cores", s.generator_cpu_cores),
            if s.valid { "yes" } else { "no" }.into(),
        ]);
    }
    table
}

/// What a merged result says of its shards, above their table.
pub fn shards_intro(shards: &Shards) -> String {
    format!(
        "Merged from {} of {} shards{}; histograms are added, so the percentiles are those of \
         every shard's requests together.",
        shards.merged.len(),
        shards.count,
        shards
            .merged
            .first()
            .and_then(|s| s.clock.start_at.as_deref())
            .map_or_else(String::new, |at| format!(" started at {at}")),
    )
}

fn shards_markdown(shards: &Shards) -> String {
    let table = shards_table(shards);
    let mut out = format!("\n## Shards\n\n{}\n\n", shards_intro(shards));
    out.push_str(&table.to_markdown());
    for note in &shards.notes {
        out.push_str(&format!("\n- {note}"));
    }
    if !shards.notes.is_empty() {
        out.push('\n');
    }
    out
}
