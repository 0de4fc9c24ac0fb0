//! Each client request joined with what the upstreams recorded of it: its attempts in time
//! order (which upstream, when, with what status), found by the mark the request carried. When
//! the gateway passed no mark on, the figures fall back to the upstreams' counts over time.

use std::collections::HashMap;

use super::trial::Observed;

/// One attempt of a request, as an upstream recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    pub upstream: usize,
    pub t_ns: u64,
    pub status: u16,
    pub cut: bool,
}

impl Attempt {
    /// The upstream answered it with an error (or broke its stream).
    pub fn failed(&self) -> bool {
        self.status >= 400 || self.cut
    }
}

/// The trial's requests with their attempts.
pub struct Joined {
    /// By the client request's sequence number, in time order.
    pub attempts: HashMap<u64, Vec<Attempt>>,
    /// Arrivals that carried a mark of this trial, and those that carried none.
    pub marked: u64,
    pub unmarked: u64,
}

impl Joined {
    pub fn of(observed: &Observed) -> Joined {
        let (low, high) = match (observed.sent.first(), observed.sent.last()) {
            (Some(a), Some(b)) => (a.seq, b.seq),
            _ => (u64::MAX, 0),
        };
        let range = low..=high;
        let mut attempts: HashMap<u64, Vec<Attempt>> = HashMap::new();
        let (mut marked, mut unmarked) = (0, 0);
        for (upstream, arrivals) in observed.arrivals.iter().enumerate() {
            for a in arrivals {
                match a.client_seq().filter(|s| range.contains(s)) {
                    Some(seq) => {
                        marked += 1;
                        attempts.entry(seq).or_default().push(Attempt {
                            upstream,
                            t_ns: a.t_ns,
                            status: a.status,
                            cut: a.cut,
                        });
                    }
                    None => unmarked += 1,
                }
            }
        }
        for list in attempts.values_mut() {
            list.sort_by_key(|a| a.t_ns);
        }
        Joined {
            attempts,
            marked,
            unmarked,
        }
    }

    /// The marks came through: most arrivals carried one (or nothing arrived at all).
    pub fn by_marks(&self) -> bool {
        self.marked >= self.unmarked
    }

    /// The attempts of request `seq` (none: no upstream saw it).
    pub fn of_request(&self, seq: u64) -> &[Attempt] {
        self.attempts.get(&seq).map_or(&[], Vec::as_slice)
    }
}

/// Every arrival's instant at upstream `u`, in time order.
pub fn times_at(observed: &Observed, u: usize) -> Vec<u64> {
    let mut times: Vec<u64> = observed.arrivals[u].iter().map(|a| a.t_ns).collect();
    times.sort_unstable();
    times
}
