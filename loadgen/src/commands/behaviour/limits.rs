//! Rate limits: the gateway is configured to a limit per key, and loaded past it over several
//! keys (round robin). Per key: the rate it accepted against the limit, and whether requests it
//! refused reached an upstream anyway; what a refusal looks like is sampled by one request
//! after the load (`refusal`).

use super::common::{error_rate, Figures};
use super::join::Joined;
use super::trial::Observed;
use crate::wire::outcome::ErrorKind;

/// One key's counts in a trial.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyCounts {
    pub sent: u64,
    pub accepted: u64,
    pub refused: u64,
    pub refused_reached_upstream: u64,
}

/// A trial's limit figures and each key's counts.
pub fn figures(
    observed: &Observed,
    joined: &Joined,
    keys: usize,
    limit_per_s: f64,
    seconds: f64,
) -> (Figures, Vec<String>, Vec<KeyCounts>) {
    let mut counts = vec![KeyCounts::default(); keys];
    for s in &observed.sent {
        let c = &mut counts[s.template.min(keys - 1)];
        c.sent += 1;
        match s.error {
            None => c.accepted += 1,
            Some(ErrorKind::Status(_)) => {
                c.refused += 1;
                if !joined.of_request(s.seq).is_empty() {
                    c.refused_reached_upstream += 1;
                }
            }
            Some(_) => {}
        }
    }
    let mut f = Figures::new();
    let mut notes = Vec::new();
    let of_limit: Vec<f64> = counts
        .iter()
        .map(|c| c.accepted as f64 / seconds / limit_per_s)
        .collect();
    let mean = of_limit.iter().sum::<f64>() / of_limit.len().max(1) as f64;
    f.insert("accepted_of_limit".into(), Some(mean));
    f.insert(
        "accepted_of_limit_max".into(),
        of_limit.iter().copied().reduce(f64::max),
    );
    f.insert("refused_share".into(), error_rate(observed.sent.iter()));
    let reached: u64 = counts.iter().map(|c| c.refused_reached_upstream).sum();
    f.insert(
        "refused_reached_upstream".into(),
        joined.by_marks().then_some(reached as f64),
    );
    if !joined.by_marks() {
        notes.push("refused_reached_upstream: the gateway passed no mark on".into());
    }
    (f, notes, counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::logged::Sent;
    use crate::engine::steering::Arrival;

    #[test]
    fn each_key_is_counted_against_the_limit_and_refusals_that_reached_upstream_too() {
        // 2 keys, 10 s, 4 requests a second each; key 0 had 20 accepted, key 1 all 40.
        let sent: Vec<Sent> = (0..80u64)
            .map(|k| Sent {
                seq: k,
                template: (k % 2) as usize,
                due_ns: k * 125_000_000,
                lag_ns: 0,
                done_ns: k * 125_000_000 + 1_000_000,
                error: (k % 2 == 0 && k % 4 == 2).then_some(ErrorKind::Status(429)),
            })
            .collect();
        // One refused request (seq 2) reached the upstream anyway.
        let arrivals = vec![vec![Arrival {
            i: 0,
            t_ns: 1,
            seq: Some(2),
            user: None,
            key: None,
            status: 429,
            cut: false,
        }]];
        let observed = Observed {
            sent,
            start_ns: 0,
            end_ns: 10_000_000_000,
            arrivals,
            window: None,
            dropped: 0,
        };
        let joined = Joined::of(&observed);
        let (f, _, counts) = figures(&observed, &joined, 2, 2.0, 10.0);
        assert_eq!((counts[0].accepted, counts[0].refused), (20, 20));
        assert_eq!((counts[1].accepted, counts[1].refused), (40, 0));
        assert_eq!(counts[0].refused_reached_upstream, 1);
        // Key 0 accepted at 2/s and key 1 at 4/s against 2/s: 100% and 200%.
        assert_eq!(f["accepted_of_limit"], Some(1.5));
        assert_eq!(f["accepted_of_limit_max"], Some(2.0));
        assert_eq!(f["refused_share"], Some(0.25));
    }
}
