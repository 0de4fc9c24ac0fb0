//! The sessions section of a run's page: per run that sent sessions, how they went, the
//! per-turn table, TTFT beside prompt size by turn number, the cache's hit rate by turn, and the
//! turns answered per second of the run.

use super::{figure, latency_axis, table_html};
use crate::report::sessions::{branch_table, summary_line, turns_table};
use crate::report::svg::{escape, Axis, LinePlot, Series};
use crate::results::breakdown::SecondSummary;
use crate::results::run::{RunResult, TargetRun};
use crate::results::sessions::{SessionsResult, TurnRow};

/// The section, or nothing when no run sent sessions.
pub(super) fn sessions_html(view: &RunResult) -> String {
    let runs: Vec<(&TargetRun, &SessionsResult)> = view
        .runs
        .iter()
        .filter_map(|r| Some((r, r.sessions.as_ref()?)))
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2 id=\"sessions\">Sessions</h2>");
    if let Some(plan) = &view.plan.sessions {
        out.push_str(&format!(
            "<p class=\"meta\">{} sessions from <code>{}</code> ({}), at most {} turns each; think time {}.</p>",
            plan.sessions,
            escape(&plan.source),
            escape(&plan.format),
            plan.most_turns,
            escape(&plan.think),
        ));
    }
    for (run, sessions) in runs {
        let label = format!("{} {}", run.target.url, run.scenario);
        out.push_str(&run_section(&label, &run.timeline, sessions));
    }
    out
}

/// One run's sessions: how they went, the table and the plots.
fn run_section(label: &str, timeline: &[SecondSummary], s: &SessionsResult) -> String {
    format!(
        "<h3>{}</h3><p>{}</p>{}{}<div class=\"pair\">{}{}</div>{}{}",
        escape(label),
        escape(&summary_line(s)),
        table_html(&turns_table(s)),
        branch_table(s).map_or_else(String::new, |t| format!(
            "<p>Branches (sub-agents), by each branch's own turns:</p>{}",
            table_html(&t)
        )),
        ttft_figure(s),
        prompt_figure(s),
        cache_figure(s),
        timeline_figure(timeline, s)
    )
}

fn turn_axis() -> Axis {
    Axis {
        label: "turn".into(),
        ..Axis::default()
    }
}

/// Points of every turn that has a value.
fn by_turn(s: &SessionsResult, pick: impl Fn(&TurnRow) -> Option<f64>) -> Vec<(f64, f64)> {
    s.turns
        .iter()
        .filter_map(|t| Some((t.turn as f64, pick(t)?)))
        .collect()
}

/// TTFT p50 and p99 by turn (response time where the turns did not stream).
fn ttft_figure(s: &SessionsResult) -> String {
    let streamed = s.turns.iter().any(|t| t.all.ttft.is_some());
    let what = if streamed { "TTFT" } else { "Response time" };
    let pick = |t: &TurnRow| {
        if streamed {
            t.all.ttft.map(|m| (m.p50, m.p99))
        } else {
            Some((t.all.response_time.p50, t.all.response_time.p99))
        }
    };
    figure(
        LinePlot {
            marks: Vec::new(),
            title: format!("{what} by turn"),
            x: turn_axis(),
            y: latency_axis(),
            series: vec![
                Series {
                    name: "p50".into(),
                    points: by_turn(s, |t| pick(t).map(|v| v.0 as f64)),
                },
                Series {
                    name: "p99".into(),
                    points: by_turn(s, |t| pick(t).map(|v| v.1 as f64)),
                },
            ],
        }
        .to_svg(),
    )
}

/// Mean prompt size by turn: the history grows turn by turn.
fn prompt_figure(s: &SessionsResult) -> String {
    figure(
        LinePlot {
            marks: Vec::new(),
            title: "Prompt size by turn".into(),
            x: turn_axis(),
            y: Axis {
                label: "mean prompt (tokens, 4 bytes each)".into(),
                ..Axis::default()
            },
            series: vec![Series {
                name: "prompt".into(),
                points: by_turn(s, |t| Some(t.mean_prompt_tokens)),
            }],
        }
        .to_svg(),
    )
}

/// The cache's hit rate and cached share of the prompt by turn, as the upstream reported them.
fn cache_figure(s: &SessionsResult) -> String {
    let hit = by_turn(s, |t| t.hit_rate.map(|v| v * 100.0));
    if hit.is_empty() {
        return "<p class=\"meta\">The upstream reported no prompt cache, so there is no hit rate by turn.</p>".into();
    }
    figure(
        LinePlot {
            marks: Vec::new(),
            title: "Prompt cache by turn (as the upstream reported it)".into(),
            x: turn_axis(),
            y: Axis {
                label: "%".into(),
                ..Axis::default()
            },
            series: vec![
                Series {
                    name: "hit rate".into(),
                    points: hit,
                },
                Series {
                    name: "cached share".into(),
                    points: by_turn(s, |t| t.cached_share.map(|v| v * 100.0)),
                },
            ],
        }
        .to_svg(),
    )
}

/// Per second of the measured window: sessions started and active (the result's session
/// timeline), beside the turns answered and failed (the run's timeline).
fn timeline_figure(timeline: &[SecondSummary], s: &SessionsResult) -> String {
    let pick = |f: fn(&SecondSummary) -> u64| {
        timeline
            .iter()
            .map(|t| (t.second as f64, f(t) as f64))
            .collect::<Vec<_>>()
    };
    let sessions = |f: fn(&crate::results::sessions::SessionSecond) -> u64| {
        s.timeline
            .iter()
            .map(|t| (t.second as f64, f(t) as f64))
            .collect::<Vec<_>>()
    };
    let mut series = vec![
        Series {
            name: "turns answered".into(),
            points: pick(|t| t.ok),
        },
        Series {
            name: "turns failed".into(),
            points: pick(|t| t.errors),
        },
    ];
    if !s.timeline.is_empty() {
        series.push(Series {
            name: "sessions started".into(),
            points: sessions(|t| t.started),
        });
        series.push(Series {
            name: "sessions active".into(),
            points: sessions(|t| t.active),
        });
    }
    let plot = LinePlot {
        marks: Vec::new(),
        title: "Session timeline: sessions and turns per second".into(),
        x: Axis {
            label: "second of the measured window".into(),
            ..Axis::default()
        },
        y: Axis {
            label: "per second".into(),
            ..Axis::default()
        },
        series,
    };
    let sessions_note = if s.timeline.is_empty() {
        " This result has no session timeline (written before it was recorded): only the turns are drawn."
    } else {
        " Sessions started are counted at their intended start, active ones at each second's end."
    };
    format!(
        "{}<p class=\"meta\">Turns answered and failed in each second of the measured window (by \
         completion), and sessions started and active.{sessions_note} Over the window {} sessions \
         started, {} completed every turn, {} had a turn fail and {} waited for a place (+{} \
         started in the warm-up).</p>",
        figure(plot.to_svg()),
        s.started,
        s.completed,
        s.failed,
        s.waited,
        s.warmup
    )
}

#[cfg(test)]
mod tests;
