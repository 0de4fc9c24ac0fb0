//! A run's sessions in its result: per turn number (TTFT, ITL, response time, prompt size, the
//! cache as the upstream reported it), each split by cache hit and miss and with its tool
//! rounds apart, and per session (duration, the share of it in tool rounds, turns completed,
//! turns not sent by reason). Every distribution is kept as a
//! histogram too, so `loadgen merge` adds shards' tables exactly.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::results::hdr_codec::{decode, encode};
use crate::results::metric::Summary;

/// What a result says of a run's sessions and how they were sent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionPlanRecord {
    pub source: String,
    /// gatebench, aiperf_multi_turn or vllm_conversations.
    pub format: String,
    pub sessions: usize,
    pub most_turns: usize,
    pub crc32: u32,
    /// Think time where a turn gives none.
    pub think: String,
    pub max_sessions: Option<usize>,
    /// The user-centric mode's users and their turn gap.
    pub users: Option<usize>,
    pub turn_gap_us: Option<u64>,
    /// Where the bodies mark an explicit prompt cache (`none`, `system`, `history`, `:1h`):
    /// routes of an API with one only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_marks: Option<String>,
}

/// Requests of one kind: their counts, response times and TTFTs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Split {
    pub requests: u64,
    pub ok: u64,
    pub errors: u64,
    /// From each request's intended time (CO-corrected), µs.
    pub response_time: Summary,
    /// Streams only.
    #[serde(default)]
    pub ttft: Option<Summary>,
    #[serde(default)]
    pub response_time_histogram: String,
    #[serde(default)]
    pub ttft_histogram: String,
}

impl Split {
    /// `ok` answered and `errors` failed requests with these times.
    pub fn of(
        ok: u64,
        errors: u64,
        response_time: &Histogram<u64>,
        ttft: &Histogram<u64>,
    ) -> Split {
        Split {
            requests: ok + errors,
            ok,
            errors,
            response_time: Summary::of(response_time),
            ttft: (!ttft.is_empty()).then(|| Summary::of(ttft)),
            response_time_histogram: encode(response_time),
            ttft_histogram: encode(ttft),
        }
    }

    /// Adds another's requests.
    pub fn add(&mut self, other: &Split) -> Result<(), String> {
        let rt = added(
            &self.response_time_histogram,
            &other.response_time_histogram,
        )?;
        let ttft = added(&self.ttft_histogram, &other.ttft_histogram)?;
        *self = Split::of(self.ok + other.ok, self.errors + other.errors, &rt, &ttft);
        Ok(())
    }
}

/// The sum of two encoded histograms (an empty text is an empty histogram: the other one is
/// kept as it is, at its own precision, so a shard written before a field existed does not
/// coarsen it).
fn added(a: &str, b: &str) -> Result<Histogram<u64>, String> {
    if a.is_empty() {
        return decoded(b);
    }
    let mut sum = decoded(a)?;
    sum.add(decoded(b)?).map_err(|e| e.to_string())?;
    Ok(sum)
}

fn decoded(text: &str) -> Result<Histogram<u64>, String> {
    if text.is_empty() {
        Histogram::new_with_bounds(1, 3_600_000_000, 2).map_err(|e| e.to_string())
    } else {
        decode(text)
    }
}

/// One turn number of every session (a session's requests counted from 1, tool rounds too).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TurnRow {
    pub turn: u64,
    #[serde(flatten)]
    pub all: Split,
    /// Gaps between output events of this turn's streams, µs.
    #[serde(default)]
    pub itl: Option<Summary>,
    #[serde(default)]
    pub itl_histogram: String,
    /// Of which requests that sent tool results (tool rounds) …
    pub tool_requests: u64,
    /// … and their times and TTFT apart.
    #[serde(default)]
    pub tool: Split,
    /// Bytes and prompt tokens sent (the 4-bytes-a-token estimate), in all and per request:
    /// the history grows turn by turn.
    pub body_bytes: u64,
    pub prompt_tokens: u64,
    pub mean_body_bytes: f64,
    pub mean_prompt_tokens: f64,
    /// Answers whose usage gave the prompt's size, and that size in the upstream's tokens.
    #[serde(default)]
    pub usage_answers: u64,
    #[serde(default)]
    pub usage_prompt_tokens: u64,
    /// Answers whose usage had the API's cache fields, their prompt in the upstream's tokens,
    /// of which read from and written to its cache.
    pub reported: u64,
    pub upstream_prompt_tokens: u64,
    pub cached_tokens: u64,
    pub written_tokens: u64,
    /// Share of reported answers with any cached prompt tokens; `None`: none reported.
    pub hit_rate: Option<f64>,
    /// Share of the reported prompt tokens that came from the cache.
    pub cached_share: Option<f64>,
    pub hit: Split,
    pub miss: Split,
}

impl TurnRow {
    /// Fills in the shares and means from the counts.
    pub fn derive(&mut self) {
        let n = self.all.requests.max(1) as f64;
        self.mean_body_bytes = self.body_bytes as f64 / n;
        self.mean_prompt_tokens = self.prompt_tokens as f64 / n;
        self.hit_rate = (self.reported > 0).then(|| self.hit.ok as f64 / self.reported as f64);
        self.cached_share = (self.upstream_prompt_tokens > 0)
            .then(|| self.cached_tokens as f64 / self.upstream_prompt_tokens as f64);
    }

    fn add(&mut self, other: &TurnRow) -> Result<(), String> {
        self.all.add(&other.all)?;
        let itl = added(&self.itl_histogram, &other.itl_histogram)?;
        self.itl = (!itl.is_empty()).then(|| Summary::of(&itl));
        self.itl_histogram = encode(&itl);
        self.tool_requests += other.tool_requests;
        self.tool.add(&other.tool)?;
        self.body_bytes += other.body_bytes;
        self.prompt_tokens += other.prompt_tokens;
        self.usage_answers += other.usage_answers;
        self.usage_prompt_tokens += other.usage_prompt_tokens;
        self.reported += other.reported;
        self.upstream_prompt_tokens += other.upstream_prompt_tokens;
        self.cached_tokens += other.cached_tokens;
        self.written_tokens += other.written_tokens;
        self.hit.add(&other.hit)?;
        self.miss.add(&other.miss)?;
        self.derive();
        Ok(())
    }
}

/// A run's sessions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SessionsResult {
    /// Sessions whose start fell in the measured window …
    pub started: u64,
    /// … of which every turn was answered, a turn failed, and which waited for a place
    /// (`--max-sessions`) past their intended start.
    pub completed: u64,
    pub failed: u64,
    pub waited: u64,
    /// Sessions started in the warm-up (not recorded).
    pub warmup: u64,
    /// Turns of the started sessions never sent, by reason.
    pub not_sent: BTreeMap<String, u64>,
    /// From a session's intended start to the end of its last answered turn, µs.
    pub duration: Summary,
    #[serde(default)]
    pub duration_histogram: String,
    /// Per session, the share of its duration its own tool rounds took (from the answer that
    /// called the tools to the answer to their results; a branch's are not counted), in
    /// tenths of a percent: 1,000 is all of it.
    #[serde(default)]
    pub tool_share: Summary,
    #[serde(default)]
    pub tool_share_histogram: String,
    /// Turns (requests) answered per session.
    pub turns_completed: Summary,
    #[serde(default)]
    pub turns_completed_histogram: String,
    /// Over every turn: share of reported answers that hit, and of prompt tokens cached.
    pub hit_rate: Option<f64>,
    pub cached_share: Option<f64>,
    /// Every turn that hit, and every one that missed.
    pub hit: Split,
    pub miss: Split,
    /// Every tool round, of the sessions and their branches.
    #[serde(default)]
    pub tool: Split,
    pub turns: Vec<TurnRow>,
    /// Branches (sub-agents) started, and their requests by the branch's own turn numbers
    /// (not in `turns`; in the run-wide hit and miss splits).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub branches: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branch_turns: Vec<TurnRow>,
    /// Per second of the measured window: sessions started (by intended start), ended (by
    /// last answer) and active at the second's end.
    #[serde(default)]
    pub timeline: Vec<SessionSecond>,
}

/// One second of the session timeline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSecond {
    pub second: u64,
    pub started: u64,
    pub ended: u64,
    pub active: u64,
}

/// The timeline of `(started, ended)` counts per second, with the sessions active at each
/// second's end.
pub fn timeline_of(seconds: &[(u64, u64)]) -> Vec<SessionSecond> {
    let mut active: u64 = 0;
    seconds
        .iter()
        .enumerate()
        .map(|(i, (started, ended))| {
            active = (active + started).saturating_sub(*ended);
            SessionSecond {
                second: i as u64,
                started: *started,
                ended: *ended,
                active,
            }
        })
        .collect()
}

impl SessionsResult {
    /// Fills in the run-wide shares from the rows.
    pub fn derive(&mut self) {
        let reported: u64 = self.turns.iter().map(|t| t.reported).sum();
        let prompt: u64 = self.turns.iter().map(|t| t.upstream_prompt_tokens).sum();
        let cached: u64 = self.turns.iter().map(|t| t.cached_tokens).sum();
        self.hit_rate = (reported > 0).then(|| self.hit.ok as f64 / reported as f64);
        self.cached_share = (prompt > 0).then(|| cached as f64 / prompt as f64);
    }

    /// Adds another shard's sessions (`loadgen merge`).
    pub fn add(&mut self, other: &SessionsResult) -> Result<(), String> {
        self.started += other.started;
        self.completed += other.completed;
        self.failed += other.failed;
        self.waited += other.waited;
        self.warmup += other.warmup;
        for (why, n) in &other.not_sent {
            *self.not_sent.entry(why.clone()).or_default() += n;
        }
        let sum = |a: &str, b: &str| -> Result<(Summary, String), String> {
            let h = added(a, b)?;
            Ok((Summary::of(&h), encode(&h)))
        };
        (self.duration, self.duration_histogram) =
            sum(&self.duration_histogram, &other.duration_histogram)?;
        (self.tool_share, self.tool_share_histogram) =
            sum(&self.tool_share_histogram, &other.tool_share_histogram)?;
        (self.turns_completed, self.turns_completed_histogram) = sum(
            &self.turns_completed_histogram,
            &other.turns_completed_histogram,
        )?;
        self.hit.add(&other.hit)?;
        self.miss.add(&other.miss)?;
        self.tool.add(&other.tool)?;
        add_rows(&mut self.turns, &other.turns)?;
        add_rows(&mut self.branch_turns, &other.branch_turns)?;
        self.branches += other.branches;
        let len = self.timeline.len().max(other.timeline.len());
        let mut seconds = vec![(0, 0); len];
        for s in self.timeline.iter().chain(&other.timeline) {
            let at = &mut seconds[s.second as usize];
            at.0 += s.started;
            at.1 += s.ended;
        }
        self.timeline = timeline_of(&seconds);
        self.derive();
        Ok(())
    }
}

/// Adds another's rows to `mine`, turn number by turn number.
fn add_rows(mine: &mut Vec<TurnRow>, theirs: &[TurnRow]) -> Result<(), String> {
    for row in theirs {
        match mine.iter_mut().find(|t| t.turn == row.turn) {
            Some(m) => m.add(row)?,
            None => mine.push(row.clone()),
        }
    }
    mine.sort_by_key(|t| t.turn);
    Ok(())
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 2).unwrap();
        for v in values {
            h.record(*v).unwrap();
        }
        h
    }

    fn shard(times: &[u64], hits: u64) -> SessionsResult {
        let h = histogram(times);
        let split = Split::of(times.len() as u64, 0, &h, &h);
        let mut row = TurnRow {
            turn: 1,
            all: split.clone(),
            itl_histogram: encode(&histogram(&[])),
            reported: times.len() as u64,
            upstream_prompt_tokens: 1_000 * times.len() as u64,
            cached_tokens: 500 * hits,
            hit: Split::of(hits, 0, &h, &h),
            miss: Split::default(),
            ..TurnRow::default()
        };
        row.derive();
        let mut s = SessionsResult {
            started: times.len() as u64,
            completed: times.len() as u64,
            duration_histogram: encode(&h),
            tool_share_histogram: encode(&histogram(&[250])),
            turns_completed_histogram: encode(&histogram(&[1])),
            hit: row.hit.clone(),
            turns: vec![row],
            ..SessionsResult::default()
        };
        s.derive();
        s
    }

    #[test]
    fn shards_add_into_the_table_one_process_would_have_written() {
        let mut a = shard(&[100, 200, 300], 1);
        let b = shard(&[400, 500], 2);
        a.add(&b).unwrap();
        let whole = shard(&[100, 200, 300, 400, 500], 3);
        let (row, want) = (&a.turns[0], &whole.turns[0]);
        assert_eq!(row.all.requests, 5);
        assert_eq!(row.all.response_time.p50, want.all.response_time.p50);
        assert_eq!(row.all.response_time.max, want.all.response_time.max);
        assert_eq!(
            (row.hit_rate, row.cached_share),
            (want.hit_rate, want.cached_share)
        );
        assert_eq!(a.started, 5);
        assert_eq!(a.duration.count, 5);
        assert_eq!((a.tool_share.count, a.tool_share.p50), (2, 250));
        // A shard from before the share existed keeps the other's values exact (615 is not
        // a value of a histogram of two significant digits).
        let mut share = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        share.record(615).unwrap();
        let mut old = shard(&[100], 0);
        old.tool_share_histogram = String::new();
        let mut new = shard(&[100], 0);
        new.tool_share_histogram = encode(&share);
        old.add(&new).unwrap();
        assert_eq!((old.tool_share.count, old.tool_share.max), (1, 615));
    }
}
