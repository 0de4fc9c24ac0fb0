//! What a worker records of its sessions: per turn number, every turn's times and sizes, split
//! by whether the upstream reported a cache hit, and its tool rounds apart; per session, how
//! long it took, how much of that went to tool rounds, how many turns it completed, and the
//! turns it never sent, by reason.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::generator::breakdown::Group;
use crate::generator::histogram::new_histogram;
use crate::wire::outcome::{Exchange, Tag};

/// Turn numbers past this share the last row.
pub const MOST_TURN_ROWS: usize = 256;

/// One turn number's record.
#[derive(Debug, Clone)]
pub struct TurnGroup {
    /// Every request of this turn number.
    pub all: Group,
    /// Of which the upstream reported any cached prompt tokens …
    pub hit: Group,
    /// … and reported none.
    pub miss: Group,
    /// Inter-token gaps of this turn's streams.
    pub itl: Histogram<u64>,
    /// Requests that sent tool results (an agent loop's rounds) …
    pub tool_requests: u64,
    /// … and their times.
    pub tool: Group,
    /// Answers whose usage gave the prompt's size, and that size in the upstream's tokens.
    pub usage_answers: u64,
    pub usage_prompt_tokens: u64,
    /// Answers whose usage had the cache fields (the hit and miss groups' requests).
    pub reported: u64,
    /// The prompt in tokens as the upstream counted it, and how much of it came from the cache
    /// and was written to it, over the reported answers.
    pub upstream_prompt_tokens: u64,
    pub cached_tokens: u64,
    pub written_tokens: u64,
}

impl Default for TurnGroup {
    fn default() -> TurnGroup {
        TurnGroup {
            all: Group::default(),
            hit: Group::default(),
            miss: Group::default(),
            itl: new_histogram(2),
            tool_requests: 0,
            tool: Group::default(),
            usage_answers: 0,
            usage_prompt_tokens: 0,
            reported: 0,
            upstream_prompt_tokens: 0,
            cached_tokens: 0,
            written_tokens: 0,
        }
    }
}

impl TurnGroup {
    fn success(&mut self, x: &Exchange, response_us: u64) {
        self.all.success(x, response_us);
        for gap in &x.output_gaps_ns {
            self.itl.saturating_record((gap / 1_000).max(1));
        }
        if x.tag.tool {
            self.tool_requests += 1;
            self.tool.success(x, response_us);
        }
        if let Some(cache) = x.cache() {
            self.usage_answers += 1;
            self.usage_prompt_tokens += cache.prompt_tokens;
        }
        if let Some(cache) = x.cache().filter(|c| c.reported) {
            self.reported += 1;
            self.upstream_prompt_tokens += cache.prompt_tokens;
            self.cached_tokens += cache.cached_tokens;
            self.written_tokens += cache.written_tokens;
            let group = if cache.hit() {
                &mut self.hit
            } else {
                &mut self.miss
            };
            group.success(x, response_us);
        }
    }

    fn failure(&mut self, tag: Tag) {
        self.all.failure(tag);
        if tag.tool {
            self.tool_requests += 1;
            self.tool.failure(tag);
        }
    }

    fn merge(&mut self, other: &TurnGroup) {
        self.all.merge(&other.all);
        self.hit.merge(&other.hit);
        self.miss.merge(&other.miss);
        // Invariant: every turn group's histograms are made by `new_histogram(2)`.
        self.itl.add(&other.itl).expect("same bounds");
        self.tool_requests += other.tool_requests;
        self.tool.merge(&other.tool);
        self.usage_answers += other.usage_answers;
        self.usage_prompt_tokens += other.usage_prompt_tokens;
        self.reported += other.reported;
        self.upstream_prompt_tokens += other.upstream_prompt_tokens;
        self.cached_tokens += other.cached_tokens;
        self.written_tokens += other.written_tokens;
    }
}

/// Why a session's turn was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NotSent {
    /// An earlier turn of its session failed.
    EarlierTurnFailed,
    /// The run was stopped (Ctrl-C) or its grace ran out before the turn was due.
    Stopped,
}

impl NotSent {
    pub fn key(self) -> &'static str {
        match self {
            NotSent::EarlierTurnFailed => "earlier_turn_failed",
            NotSent::Stopped => "stopped",
        }
    }
}

/// A worker's sessions.
#[derive(Debug, Clone)]
pub struct SessionTally {
    pub turns: Vec<TurnGroup>,
    /// The branches' (sub-agents') requests, by their own turn numbers.
    pub branch_turns: Vec<TurnGroup>,
    /// Branches started.
    pub branches: u64,
    /// Sessions whose start fell in the measured window.
    pub started: u64,
    /// Of which every turn was answered …
    pub completed: u64,
    /// … and a turn failed.
    pub failed: u64,
    /// Sessions that waited for a place (`--max-sessions`) past their intended start.
    pub waited: u64,
    /// Sessions that started in the warm-up (not recorded).
    pub warmup: u64,
    /// From a session's intended start to the end of its last answered turn, µs.
    pub duration: Histogram<u64>,
    /// Of that, the share its own tool rounds took, rounded to tenths of a percent (1,000 is all of it: exact in
    /// the histogram, which holds every value up to 2,047 as it is).
    pub tool_share: Histogram<u64>,
    /// Turns answered per session.
    pub turns_done: Histogram<u64>,
    pub not_sent: BTreeMap<NotSent, u64>,
    /// Sessions started and ended in each second of the measured window (by a session's
    /// intended start and its last answer).
    pub seconds: Vec<(u64, u64)>,
    /// Start of the measured window, ns from the start of the run.
    pub window_start_ns: u64,
}

/// Seconds of the session timeline kept (a longer run's later sessions share the last).
const MOST_SECONDS: usize = 1_000_000;

impl Default for SessionTally {
    fn default() -> SessionTally {
        SessionTally {
            turns: Vec::new(),
            branch_turns: Vec::new(),
            branches: 0,
            started: 0,
            completed: 0,
            failed: 0,
            waited: 0,
            warmup: 0,
            duration: new_histogram(3),
            tool_share: new_histogram(3),
            turns_done: new_histogram(3),
            not_sent: BTreeMap::new(),
            seconds: Vec::new(),
            window_start_ns: 0,
        }
    }
}

impl SessionTally {
    fn row(&mut self, tag: Tag) -> &mut TurnGroup {
        let at = usize::from(tag.turn.max(1) - 1).min(MOST_TURN_ROWS - 1);
        let rows = if tag.branch {
            &mut self.branch_turns
        } else {
            &mut self.turns
        };
        if rows.len() <= at {
            rows.resize_with(at + 1, TurnGroup::default);
        }
        &mut rows[at]
    }

    fn second(&mut self, at_ns: u64) -> &mut (u64, u64) {
        let at = (at_ns.saturating_sub(self.window_start_ns) / 1_000_000_000) as usize;
        let at = at.min(MOST_SECONDS - 1);
        if self.seconds.len() <= at {
            self.seconds.resize(at + 1, (0, 0));
        }
        &mut self.seconds[at]
    }

    /// Counts a session of the measured window that was due at `due_ns`.
    pub fn session_started(&mut self, due_ns: u64) {
        self.started += 1;
        self.second(due_ns).0 += 1;
    }

    /// Records an answered turn (its tag says which).
    pub fn success(&mut self, x: &Exchange, response_us: u64) {
        self.row(x.tag).success(x, response_us);
    }

    /// Records a failed turn.
    pub fn failure(&mut self, tag: Tag) {
        self.row(tag).failure(tag);
    }

    /// Records a session that ended after `turns_done` answered turns, from its intended start
    /// to its last answer (`start_ns`, `end_ns`), of which `tool_ns` in its tool rounds;
    /// `failed` when a turn failed; `unsent` turns left, for `why`.
    pub fn ended(
        &mut self,
        turns_done: u64,
        (start_ns, end_ns, tool_ns): (u64, u64, u64),
        failed: bool,
        unsent: (u64, NotSent),
    ) {
        self.second(end_ns.max(start_ns)).1 += 1;
        let span_ns = end_ns.saturating_sub(start_ns);
        let duration_us = span_ns / 1_000;
        if turns_done > 0 && span_ns > 0 {
            let (tool, span) = (u128::from(tool_ns.min(span_ns)), u128::from(span_ns));
            let share = (tool * 1_000 + span / 2) / span;
            self.tool_share.saturating_record(share as u64);
        }
        if failed {
            self.failed += 1;
        } else if unsent.0 == 0 {
            self.completed += 1;
        }
        self.turns_done.saturating_record(turns_done);
        if turns_done > 0 {
            self.duration.saturating_record(duration_us.max(1));
        }
        if unsent.0 > 0 {
            *self.not_sent.entry(unsent.1).or_default() += unsent.0;
        }
    }

    /// Adds another worker's sessions.
    pub fn merge(&mut self, other: &SessionTally) {
        merge_rows(&mut self.turns, &other.turns);
        merge_rows(&mut self.branch_turns, &other.branch_turns);
        self.branches += other.branches;
        self.started += other.started;
        self.completed += other.completed;
        self.failed += other.failed;
        self.waited += other.waited;
        self.warmup += other.warmup;
        // Invariant: both tallies' histograms are made by `new_histogram(3)`.
        self.duration.add(&other.duration).expect("same bounds");
        self.tool_share.add(&other.tool_share).expect("same bounds");
        self.turns_done.add(&other.turns_done).expect("same bounds");
        for (why, n) in &other.not_sent {
            *self.not_sent.entry(*why).or_default() += n;
        }
        if self.seconds.len() < other.seconds.len() {
            self.seconds.resize(other.seconds.len(), (0, 0));
        }
        for (mine, theirs) in self.seconds.iter_mut().zip(&other.seconds) {
            mine.0 += theirs.0;
            mine.1 += theirs.1;
        }
    }
}

fn merge_rows(mine: &mut Vec<TurnGroup>, theirs: &[TurnGroup]) {
    if mine.len() < theirs.len() {
        mine.resize_with(theirs.len(), TurnGroup::default);
    }
    for (mine, theirs) in mine.iter_mut().zip(theirs) {
        mine.merge(theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::outcome::{CacheUsage, Kept};

    fn turn(turn: u16, cached: u64) -> Exchange {
        Exchange {
            due_ns: 0,
            done_ns: 4_000_000,
            first_output_ns: Some(1_000_000),
            output_gaps_ns: vec![100_000, 200_000],
            output_events: 3,
            stream: true,
            kept: Some(Box::new(Kept {
                cache: Some(CacheUsage {
                    prompt_tokens: 2_000,
                    cached_tokens: cached,
                    written_tokens: 0,
                    reported: true,
                }),
                ..Kept::default()
            })),
            tag: Tag {
                turn,
                ..Tag::default()
            },
            ..Exchange::default()
        }
    }

    #[test]
    fn turns_land_in_their_row_split_by_hit_and_miss() {
        let mut t = SessionTally::default();
        t.success(&turn(1, 0), 4_000);
        t.success(&turn(2, 1_920), 4_000);
        t.failure(Tag {
            turn: 3,
            ..Tag::default()
        });
        t.session_started(0);
        t.ended(
            2,
            (0, 1_500_000_000, 500_000_000),
            true,
            (5, NotSent::EarlierTurnFailed),
        );
        let mut other = SessionTally::default();
        let mut round = turn(2, 0);
        round.tag.tool = true;
        other.success(&round, 4_000);
        let mut branch = turn(1, 0);
        branch.tag.branch = true;
        other.success(&branch, 4_000);
        other.branches = 1;
        t.merge(&other);
        assert_eq!(t.turns.len(), 3);
        assert_eq!((t.branch_turns.len(), t.branch_turns[0].all.ok), (1, 1));
        assert_eq!(
            (t.branches, t.turns[0].all.ok),
            (1, 1),
            "not a turn of its own"
        );
        let two = &t.turns[1];
        assert_eq!(
            (two.all.ok, two.hit.ok, two.miss.ok, two.reported),
            (2, 1, 1, 2)
        );
        assert_eq!(two.cached_tokens, 1_920);
        assert_eq!(
            (two.tool_requests, two.tool.ok, two.tool.ttft.len()),
            (1, 1, 1)
        );
        assert_eq!(t.turns[0].tool.ok + t.turns[0].tool_requests, 0);
        assert_eq!(
            (t.tool_share.len(), t.tool_share.max()),
            (1, 333),
            "0.5 s of 1.5 s in tool rounds"
        );
        assert_eq!(two.itl.len(), 4);
        assert_eq!(t.turns[2].all.errors, 1);
        assert_eq!((t.failed, t.completed), (1, 0));
        assert_eq!(t.not_sent[&NotSent::EarlierTurnFailed], 5);
        assert_eq!(
            t.seconds,
            [(1, 0), (0, 1)],
            "started in second 0, ended in second 1"
        );
    }

    #[test]
    fn a_session_with_no_answer_or_no_time_has_no_tool_share() {
        let mut t = SessionTally::default();
        t.ended(0, (0, 0, 0), true, (4, NotSent::EarlierTurnFailed));
        t.ended(1, (5, 5, 0), false, (0, NotSent::Stopped));
        t.ended(1, (0, 10, 99), false, (0, NotSent::Stopped));
        assert_eq!(t.tool_share.len(), 1);
        assert_eq!(t.tool_share.max(), 1_000, "at most all of it");
    }

    #[test]
    fn a_turn_past_the_last_row_shares_it() {
        let mut t = SessionTally::default();
        t.success(&turn(u16::MAX, 0), 10);
        assert_eq!(t.turns.len(), MOST_TURN_ROWS);
    }
}
