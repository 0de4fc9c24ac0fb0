//! Caches: a corpus of known repeats (each of `--distinct` prompts once, then a seeded draw
//! among them), every upstream healthy. A request no upstream recorded was answered by the
//! gateway's cache (`hit_rate`); hits and misses have their own latency distributions. When the
//! gateway passes no mark on, the hit rate comes from the upstreams' counts (one minus
//! arrivals per request) and hits cannot be told apart one by one.

use super::common::{quantile, Figures};
use super::join::Joined;
use super::trial::Observed;

/// A trial's cache figures, and what a reader must know of them.
pub fn figures(observed: &Observed, joined: &Joined, distinct: usize) -> (Figures, Vec<String>) {
    let mut f = Figures::new();
    let mut notes = Vec::new();
    let n = observed.sent.len();
    let answered: Vec<_> = observed.sent.iter().filter(|s| s.error.is_none()).collect();
    let ceiling = (n > 0).then(|| n.saturating_sub(distinct) as f64 / n as f64);
    f.insert("hit_rate_possible".into(), ceiling);
    if joined.by_marks() {
        let (mut hits, mut misses) = (Vec::new(), Vec::new());
        for s in &answered {
            if joined.of_request(s.seq).is_empty() {
                hits.push(s.latency_ms());
            } else {
                misses.push(s.latency_ms());
            }
        }
        let rate = (!answered.is_empty()).then(|| hits.len() as f64 / answered.len() as f64);
        f.insert("hit_rate".into(), rate);
        for (name, mut v) in [("hit", hits), ("miss", misses)] {
            f.insert(format!("{name}_p50_ms"), quantile(&mut v, 0.5));
            f.insert(format!("{name}_p99_ms"), quantile(&mut v, 0.99));
        }
    } else {
        let arrivals: usize = observed.arrivals.iter().map(Vec::len).sum();
        let rate = (!answered.is_empty())
            .then(|| (1.0 - arrivals as f64 / answered.len() as f64).max(0.0));
        f.insert("hit_rate".into(), rate);
        notes.push(
            "hit_rate from the upstreams' counts: the gateway passed no mark on, so hits and \
             misses have no latency of their own"
                .into(),
        );
    }
    (f, notes)
}
