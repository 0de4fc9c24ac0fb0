//! The terminal summary of a result.

use std::fmt::Write as _;

use crate::results::breakdown::GroupSummary;
use crate::results::metric::Metric;
use crate::results::run::{RunResult, TargetRun};

/// The whole summary: one block per run, then the verdict.
pub fn summary(result: &RunResult) -> String {
    let mut out = String::new();
    for run in &result.runs {
        run_block(&mut out, run);
        together_line(&mut out, result, run);
    }
    let verdict = if result.valid {
        "valid"
    } else {
        "INVALID (see reasons above)"
    };
    let _ = writeln!(out, "verdict: {verdict}");
    out
}

/// For a shard or a timed start: which part of the schedule, and when it started.
fn together_line(out: &mut String, result: &RunResult, run: &TargetRun) {
    let shard = result.plan.shard;
    if shard.count > 1 {
        let rate = match result.plan.load {
            crate::model::load::Load::Open { rate, .. } => rate,
            crate::model::load::Load::Closed { .. } => 0.0,
        };
        let _ = writeln!(
            out,
            "  shard {shard} of the schedule: {:.1} of {rate} req/s (merge the shards' results \
             with `loadgen merge`)",
            result.plan.shard_rate().unwrap_or(0.0)
        );
    }
    if let (Some(at), Some(error)) = (&run.clock.start_at, run.clock.start_error_us) {
        let sync = match &run.clock.kernel {
            Some(k) if k.synchronized => format!(
                "synchronised (offset {:.0} us, max error {} us)",
                k.offset_us, k.max_error_us
            ),
            Some(_) => "NOT synchronised".into(),
            None => "unknown".into(),
        };
        let _ = writeln!(
            out,
            "  started at {at} ({error:+} us by this host's clock; its clock: {sync})"
        );
    }
    if let Some(r) = &run.clock.reference {
        let _ = writeln!(
            out,
            "  this host's clock is {:+} ± {} us from the reference {}",
            -r.offset_us, r.error_us, r.url
        );
    }
}

fn run_block(out: &mut String, run: &TargetRun) {
    let _ = writeln!(
        out,
        "\n{} ({}) scenario {}{}",
        run.target.url,
        run.target.resolved,
        run.scenario,
        if run.interrupted {
            " [interrupted]"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "  requests {}  ok {} ({:.2}%)  failed {}  achieved {:.1} req/s  throughput {:.1} ok/s  \
         over {:.1} s (+{} warm-up requests)",
        run.requests,
        run.ok,
        run.success_rate * 100.0,
        run.failed,
        run.achieved_rate,
        run.throughput,
        run.duration_s,
        run.warmup_requests
    );
    if let Some(steady) = run.steady_throughput {
        let _ = writeln!(
            out,
            "  goodput: {:.1} ok/s over the {:.1} s the window's requests took to end; steady \
             state (median second, ramp and drain left out) {:.1} ok/s",
            run.throughput, run.completion_window_s, steady
        );
    }
    let setup = run
        .generator_setup_cpu_s
        .map_or(String::new(), |s| format!(" + {s:.2} s set-up"));
    let _ = writeln!(
        out,
        "  connections opened {}, requests on an open connection {}, generator CPU {:.2} cores{setup}",
        run.connections_opened, run.connections_reused, run.generator_cpu_cores
    );
    let _ = writeln!(out, "  {}", connect_line(&run.connect));
    if let Some(line) = super::waiting::waiting_line(run) {
        let _ = writeln!(out, "  {line}");
    }
    metrics_block(out, run);
    groups_block(out, "class", &run.classes);
    groups_block(out, "stage", &run.stages);
    if let Some(sessions) = &run.sessions {
        let _ = writeln!(out, "  {}", super::sessions::summary_line(sessions));
        let branches = super::sessions::branch_table(sessions);
        let tables = std::iter::once(super::sessions::turns_table(sessions)).chain(branches);
        for table in tables {
            for line in table.to_text().lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    outcome_block(out, run);
}

/// A run's metrics: count and percentiles of each it recorded.
fn metrics_block(out: &mut String, run: &TargetRun) {
    let _ = writeln!(
        out,
        "  {:<16} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "metric", "count", "p50", "p90", "p99", "p99.9", "max"
    );
    for metric in Metric::ALL {
        let Some(s) = run.metrics.get(metric.name()) else {
            continue;
        };
        if s.count == 0 {
            continue;
        }
        let cell = |v: u64| format_value(metric, v);
        let _ = writeln!(
            out,
            "  {:<16} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
            metric.name(),
            s.count,
            cell(s.p50),
            cell(s.p90),
            cell(s.p99),
            cell(s.p999),
            cell(s.max)
        );
    }
}

/// A run's errors, what the upstream saw of it, and why it is invalid.
fn outcome_block(out: &mut String, run: &TargetRun) {
    if run.errors.is_empty() {
        let _ = writeln!(out, "  errors: none");
    } else {
        let list: Vec<String> = run.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "  errors: {}", list.join(", "));
    }
    if let Some(u) = &run.upstream {
        let verdict = if u.matches {
            "exactly the requests sent"
        } else {
            "NOT the requests sent: a retry, cache, hedge or drop on the way"
        };
        let _ = writeln!(
            out,
            "  upstream saw {} requests of {} sent: {verdict}",
            u.seen, u.sent
        );
    }
    for reason in &run.validity.reasons {
        let _ = writeln!(out, "  invalid: {reason}");
    }
}

/// A table of a run's groups (classes or stages): counts, sizes and response-time percentiles.
fn groups_block(out: &mut String, kind: &str, groups: &[GroupSummary]) {
    if groups.is_empty() {
        return;
    }
    let staged = groups.iter().any(|g| g.stage.is_some());
    let _ = writeln!(
        out,
        "  {:<8} {:>17} {:>9} {:>7} {:>9} {:>9} {:>10} {:>10} {:>10}",
        kind,
        if staged { "planned req/s" } else { "" },
        "requests",
        "failed",
        "body B",
        "prompt tk",
        "p50",
        "p99",
        "TTFT p99"
    );
    let time = |v: u64| format_value(Metric::ResponseTime, v);
    for g in groups {
        let plan = g.stage.map_or(String::new(), |s| {
            format!(
                "{:.0}->{:.0} got {:.0}",
                s.from_rate, s.to_rate, s.achieved_rate
            )
        });
        let _ = writeln!(
            out,
            "  {:<8} {:>17} {:>9} {:>7} {:>9.0} {:>9.0} {:>10} {:>10} {:>10}",
            g.name,
            plan,
            g.requests,
            g.errors,
            g.mean_body_bytes,
            g.mean_prompt_tokens,
            time(g.response_time.p50),
            time(g.response_time.p99),
            g.ttft.as_ref().map_or("-".into(), |t| time(t.p99)),
        );
    }
}

/// A metric's value as a person reads it: times in µs, ms or s, counts as they are.
pub fn format_value(metric: Metric, v: u64) -> String {
    if !metric.is_time() {
        return v.to_string();
    }
    if v < 1_000 {
        format!("{v}us")
    } else if v < 1_000_000 {
        format!("{:.2}ms", v as f64 / 1e3)
    } else {
        format!("{:.3}s", v as f64 / 1e6)
    }
}

/// The last lines of a terminal report of many runs: the resources sampled (if any), then
/// `valid` or `INVALID:` with every reason.
pub fn closing(
    resources: &[crate::results::resources::ResourceReport],
    valid: bool,
    invalid_reasons: &[String],
) -> String {
    let mut out = String::new();
    if !resources.is_empty() {
        out.push('\n');
        out.push_str(&super::resources::table(resources).to_text());
    }
    if valid {
        out.push_str("\nvalid\n");
    } else {
        out.push_str(&format!("\nINVALID: {}\n", invalid_reasons.join("; ")));
    }
    out
}

/// The protocol, and how long opening connections took (the handshakes are in no request's
/// time unless a request waited for its connection).
fn connect_line(facts: &crate::results::run::ConnectFacts) -> String {
    let mut line = format!(
        "{}{}",
        facts.protocol,
        if facts.tls { " over TLS" } else { "" }
    );
    let part = |name: &str, s: &crate::results::metric::Summary| {
        format!(
            "; {name} p50 {} p99 {} max {} ({})",
            format_value(Metric::ConnectionWait, s.p50),
            format_value(Metric::ConnectionWait, s.p99),
            format_value(Metric::ConnectionWait, s.max),
            s.count
        )
    };
    if let Some(s) = &facts.tcp_connect_us {
        line += &part("TCP connect", s);
    }
    if let Some(s) = &facts.tls_handshake_us {
        line += &part("TLS handshake", s);
    }
    // Results of builds whose HTTP/2 client timed bodies later than the socket's read.
    if facts.body_timed_at == "frame_delivered" {
        line += "; bodies timed as their frames reach each request (not off the socket)";
    }
    line
}
