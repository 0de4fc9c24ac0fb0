//! A run's sessions as text: one line of how the sessions went, and the per-turn table (times,
//! prompt growth, the cache as the upstream reported it, hits against misses, tool rounds
//! apart).

use super::format::micros;
use super::table::Table;
use crate::results::metric::Summary;
use crate::results::sessions::{SessionsResult, TurnRow};

/// How the sessions went, in one line.
pub fn summary_line(s: &SessionsResult) -> String {
    let not_sent = if s.not_sent.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = s.not_sent.iter().map(|(k, n)| format!("{n} {k}")).collect();
        format!("; turns not sent: {}", parts.join(", "))
    };
    let branches = if s.branches > 0 {
        let requests: u64 = s.branch_turns.iter().map(|t| t.all.requests).sum();
        format!(", {} branches ({requests} requests)", s.branches)
    } else {
        String::new()
    };
    let waited = if s.waited > 0 {
        format!(", {} waited for a place", s.waited)
    } else {
        String::new()
    };
    let share =
        |v: Option<f64>| v.map_or_else(|| "not reported".into(), |v| format!("{:.1}%", v * 100.0));
    format!(
        "sessions {} started, {} completed, {} failed{waited}{branches} (+{} in the warm-up); duration p50 {} p99 {}{}; \
         turns per session p50 {}; cache hit rate {}, cached share of the prompt {}{not_sent}",
        s.started,
        s.completed,
        s.failed,
        s.warmup,
        micros(s.duration.p50 as f64),
        micros(s.duration.p99 as f64),
        tool_rounds(s),
        s.turns_completed.p50,
        share(s.hit_rate),
        share(s.cached_share),
    )
}

/// The tool rounds' count and TTFT (response time when they did not stream), and the share of
/// a session's time they took; nothing when none was sent.
fn tool_rounds(s: &SessionsResult) -> String {
    if s.tool.requests == 0 {
        return String::new();
    }
    if s.tool.ok == 0 {
        return format!("; {} tool rounds, none answered", s.tool.requests);
    }
    let (what, time) = match &s.tool.ttft {
        Some(ttft) => ("TTFT", ttft),
        None => ("response time", &s.tool.response_time),
    };
    let share = if s.tool_share.count == 0 {
        String::new()
    } else {
        let tenths = |v: u64| format!("{:.1}%", v as f64 / 10.0);
        format!(
            "; a session's own rounds took p50 {} p90 {} of its time (over all {} sessions)",
            tenths(s.tool_share.p50),
            tenths(s.tool_share.p90),
            s.tool_share.count,
        )
    };
    let branches = if s.branches > 0 {
        " (branches' too)"
    } else {
        ""
    };
    format!(
        "; {} tool rounds{branches}, {what} p50 {}{share}",
        s.tool.requests,
        micros(time.p50 as f64),
    )
}

/// One row per turn number.
pub fn turns_table(s: &SessionsResult) -> Table {
    rows_table("turn", &s.turns)
}

/// One row per turn number of the branches (sub-agents), counted in each branch from 1;
/// `None` without branches.
pub fn branch_table(s: &SessionsResult) -> Option<Table> {
    (!s.branch_turns.is_empty()).then(|| rows_table("branch turn", &s.branch_turns))
}

fn rows_table(first: &str, rows: &[TurnRow]) -> Table {
    let mut table = Table::new(&[
        first,
        "requests",
        "failed",
        "tool",
        "prompt (tokens)",
        "upstream prompt",
        "hit rate",
        "cached",
        "P50",
        "P99",
        "TTFT P50",
        "TTFT P99",
        "ITL P50",
        "TTFT P50 hit",
        "TTFT P50 miss",
        "P50 tool",
        "TTFT P50 tool",
    ]);
    let t = |s: Option<&Summary>, f: fn(&Summary) -> u64| {
        s.map_or_else(|| "-".into(), |s| micros(f(s) as f64))
    };
    let pct = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{:.0}%", v * 100.0));
    for row in rows {
        let upstream = if row.usage_answers > 0 {
            format!(
                "{:.0}",
                row.usage_prompt_tokens as f64 / row.usage_answers as f64
            )
        } else {
            "-".into()
        };
        table.push(vec![
            row.turn.to_string(),
            row.all.requests.to_string(),
            row.all.errors.to_string(),
            row.tool_requests.to_string(),
            format!("{:.0}", row.mean_prompt_tokens),
            upstream,
            pct(row.hit_rate),
            pct(row.cached_share),
            t(Some(&row.all.response_time), |s| s.p50),
            t(Some(&row.all.response_time), |s| s.p99),
            t(row.all.ttft.as_ref(), |s| s.p50),
            t(row.all.ttft.as_ref(), |s| s.p99),
            t(row.itl.as_ref(), |s| s.p50),
            t(row.hit.ttft.as_ref(), |s| s.p50),
            t(row.miss.ttft.as_ref(), |s| s.p50),
            t((row.tool.ok > 0).then_some(&row.tool.response_time), |s| {
                s.p50
            }),
            t(row.tool.ttft.as_ref(), |s| s.p50),
        ]);
    }
    table
}
