//! The sessions section holds the turn table and its four plots, and says what the timeline
//! shows.

use super::*;
use crate::results::metric::Summary;

fn summary(p50: u64) -> Summary {
    Summary {
        count: 10,
        p50,
        p90: p50 * 2,
        p95: p50 * 2,
        p99: p50 * 3,
        p999: p50 * 3,
        max: p50 * 3,
        ..Summary::default()
    }
}

fn row(turn: u64, hit_rate: Option<f64>) -> TurnRow {
    let mut row = TurnRow {
        turn,
        reported: 10,
        ..TurnRow::default()
    };
    row.all.requests = 10;
    row.all.ok = 10;
    row.all.response_time = summary(5_000 * turn);
    row.all.ttft = Some(summary(1_000 * turn));
    row.prompt_tokens = 2_000 * turn;
    row.hit_rate = hit_rate;
    row.derive();
    row.hit_rate = hit_rate;
    row
}

fn second(second: u64, ok: u64) -> SecondSummary {
    SecondSummary {
        second,
        ok,
        errors: 0,
        response_time_p50_us: 1,
        response_time_p99_us: 1,
        response_time_max_us: 1,
        response_time_histogram: String::new(),
    }
}

#[test]
fn a_run_section_has_the_table_the_plots_and_a_caption() {
    let s = SessionsResult {
        started: 7,
        completed: 6,
        turns: vec![row(1, Some(0.0)), row(2, Some(0.9)), row(3, Some(1.0))],
        ..SessionsResult::default()
    };
    let html = run_section("http://t chat-stream", &[second(0, 12), second(1, 14)], &s);
    assert_eq!(html.matches("<svg").count(), 4, "{html}");
    for title in [
        "TTFT by turn",
        "Prompt size by turn",
        "Prompt cache by turn",
        "Session timeline",
        "<table>",
        "7 sessions started",
    ] {
        assert!(html.contains(title), "{title} missing");
    }
    // Three turns: three points on each line of the TTFT plot and on the prompt's.
    let ttft = &html[html.find("TTFT by turn").unwrap()..];
    let ttft = &ttft[..ttft.find("</svg>").unwrap()];
    assert_eq!(ttft.matches("<circle").count(), 6);
    let prompt = &html[html.find("Prompt size by turn").unwrap()..];
    let prompt = &prompt[..prompt.find("</svg>").unwrap()];
    assert_eq!(prompt.matches("<circle").count(), 3);
}

#[test]
fn without_a_reported_cache_there_is_no_hit_rate_plot() {
    let s = SessionsResult {
        turns: vec![row(1, None), row(2, None)],
        ..SessionsResult::default()
    };
    let html = run_section("x", &[], &s);
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("reported no prompt cache"));
}
