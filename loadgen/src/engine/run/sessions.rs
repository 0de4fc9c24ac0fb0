//! A worker's session tally turned into the result's per-turn and per-session tables.

use crate::generator::breakdown::Group;
use crate::generator::sessions::tally::{SessionTally, TurnGroup};
use crate::results::metric::Summary;
use crate::results::sessions::{SessionsResult, Split, TurnRow};

/// The result's sessions of `tally`.
pub(super) fn result(tally: &SessionTally) -> SessionsResult {
    let mut hit = Group::default();
    let mut miss = Group::default();
    let mut tool = Group::default();
    for turn in tally.turns.iter().chain(&tally.branch_turns) {
        hit.merge(&turn.hit);
        miss.merge(&turn.miss);
        tool.merge(&turn.tool);
    }
    let mut result = SessionsResult {
        started: tally.started,
        completed: tally.completed,
        failed: tally.failed,
        waited: tally.waited,
        warmup: tally.warmup,
        not_sent: tally
            .not_sent
            .iter()
            .map(|(why, n)| (why.key().to_string(), *n))
            .collect(),
        duration: Summary::of(&tally.duration),
        duration_histogram: crate::results::hdr_codec::encode(&tally.duration),
        tool_share: Summary::of(&tally.tool_share),
        tool_share_histogram: crate::results::hdr_codec::encode(&tally.tool_share),
        turns_completed: Summary::of(&tally.turns_done),
        turns_completed_histogram: crate::results::hdr_codec::encode(&tally.turns_done),
        hit_rate: None,
        cached_share: None,
        hit: split(&hit),
        miss: split(&miss),
        tool: split(&tool),
        turns: rows(&tally.turns),
        branches: tally.branches,
        branch_turns: rows(&tally.branch_turns),
        timeline: crate::results::sessions::timeline_of(&tally.seconds),
    };
    result.derive();
    result
}

/// The rows of the turn numbers that sent anything.
fn rows(groups: &[TurnGroup]) -> Vec<TurnRow> {
    groups
        .iter()
        .enumerate()
        .filter(|(_, t)| t.all.ok + t.all.errors > 0)
        .map(|(i, t)| row(i as u64 + 1, t))
        .collect()
}

fn split(group: &Group) -> Split {
    Split::of(group.ok, group.errors, &group.response_time, &group.ttft)
}

fn row(turn: u64, t: &TurnGroup) -> TurnRow {
    let mut row = TurnRow {
        turn,
        all: split(&t.all),
        itl: (!t.itl.is_empty()).then(|| Summary::of(&t.itl)),
        itl_histogram: crate::results::hdr_codec::encode(&t.itl),
        tool_requests: t.tool_requests,
        tool: split(&t.tool),
        body_bytes: t.all.body_bytes,
        prompt_tokens: t.all.prompt_tokens,
        usage_answers: t.usage_answers,
        usage_prompt_tokens: t.usage_prompt_tokens,
        reported: t.reported,
        upstream_prompt_tokens: t.upstream_prompt_tokens,
        cached_tokens: t.cached_tokens,
        written_tokens: t.written_tokens,
        hit: split(&t.hit),
        miss: split(&t.miss),
        ..TurnRow::default()
    };
    row.derive();
    row
}
