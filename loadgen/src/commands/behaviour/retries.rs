//! Retries: the first upstream answers every request of its window with an error (429 with
//! `retry-after` by default). From the upstreams' records: how many upstream requests each
//! client request became, by status (`amplification`, `amplification_429`, ...), the gap
//! between a request's attempts (`retry_delay_ms`), and whether the gateway waited as long as
//! the upstream's `retry-after` asked before trying the same upstream again.

use gatebench_shared::stats::median;

use super::common::{amplification, error_rate, retry_gaps_ms, Figures, Phase};
use super::join::Joined;
use super::trial::Observed;

/// What the mock's 429 asks for: `retry-after: 1` and `retry-after-ms: 1000`.
pub const RETRY_AFTER_MS: f64 = 1_000.0;
/// A wait within this share of what was asked counts as honouring it (timers round).
const HONOURED_SHARE: f64 = 0.95;

/// A trial's retry figures, and what a reader must know of them.
pub fn figures(observed: &Observed, joined: &Joined) -> (Figures, Vec<String>) {
    let mut f = Figures::new();
    let mut notes = Vec::new();
    let n = observed.sent.len() as f64;
    f.insert("amplification".into(), amplification(observed, joined));
    let mut by_status = std::collections::BTreeMap::<u16, u64>::new();
    if joined.by_marks() {
        for a in joined.attempts.values().flatten() {
            *by_status.entry(a.status).or_default() += 1;
        }
    } else {
        for a in observed.arrivals.iter().flatten() {
            *by_status.entry(a.status).or_default() += 1;
        }
    }
    for (status, count) in by_status {
        f.insert(
            format!("amplification_{status}"),
            (n > 0.0).then(|| count as f64 / n),
        );
    }
    let gaps = retry_gaps_ms(joined);
    if gaps.is_empty() && joined.by_marks() {
        notes.push("retry_delay_ms: no request reached an upstream twice".into());
    }
    f.insert("retry_delay_ms".into(), median(&gaps));
    let window = observed.window;
    f.insert("error_rate".into(), error_rate(observed.sent.iter()));
    f.insert(
        "error_rate_window".into(),
        error_rate(
            observed
                .sent
                .iter()
                .filter(|s| Phase::of(s.due_ns, window) == Phase::Window),
        ),
    );
    if !joined.by_marks() {
        notes.push("retry_delay_ms: the gateway passed no mark on".into());
        notes.push("retry_after_honoured: the gateway passed no mark on".into());
        return (f, notes);
    }
    let seen: Vec<usize> = joined.attempts.values().map(Vec::len).collect();
    let retried = seen.iter().filter(|&&k| k > 1).count();
    f.insert(
        "retried_share".into(),
        (!seen.is_empty()).then(|| retried as f64 / seen.len() as f64),
    );
    // The waits after a throttled attempt before the next attempt on the same upstream.
    let mut waits = Vec::new();
    for attempts in joined.attempts.values() {
        for (i, a) in attempts.iter().enumerate() {
            if a.status != 429 {
                continue;
            }
            if let Some(next) = attempts[i + 1..].iter().find(|b| b.upstream == a.upstream) {
                waits.push((next.t_ns - a.t_ns) as f64 / 1e6);
            }
        }
    }
    let honoured = waits
        .iter()
        .filter(|&&w| w >= RETRY_AFTER_MS * HONOURED_SHARE)
        .count();
    f.insert(
        "retry_after_honoured".into(),
        (!waits.is_empty()).then(|| honoured as f64 / waits.len() as f64),
    );
    if waits.is_empty() {
        notes.push(
            "retry_after_honoured: no throttled attempt was tried again on the same upstream"
                .into(),
        );
    }
    (f, notes)
}
