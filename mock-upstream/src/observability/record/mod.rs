//! `--record N`: the last N arrivals on the API routes, each with what a load generator needs
//! to tell where a gateway sent it and how it was answered (time, `x-gatebench-seq`, user, key
//! hash, route, status, whether a mid-stream fault was chosen), and counts by status for each
//! second since start. Served at `GET /v1/gatebench/record` (`report`).
//!
//! The ring is allocated whole at start-up and sits behind one mutex: a push is a lock and a
//! copy of about 100 bytes. Only the per-second counts grow, one small vector a second.
//!
//! - `fields`: the user a body names, kept inline (the key's hash is `crate::admission::auth`'s).
//! - `report`: the JSON of `GET /v1/gatebench/record`.
//!
//! Plain data: the route that serves it is the handler's.

mod fields;
mod report;

use std::sync::Mutex;

pub use fields::{user_in_body, UserId};

/// One arrival as recorded.
#[derive(Debug, Clone, Copy)]
pub struct Arrived {
    /// When it arrived (`CLOCK_MONOTONIC` ns).
    pub t_ns: u64,
    /// Its `x-gatebench-seq`.
    pub seq: Option<u64>,
    /// Its body's `user` (or Anthropic's `metadata.user_id`), at most 64 bytes.
    pub user: UserId,
    /// The top 32 bits of the FNV-1a 64 hash of its API key.
    pub key: Option<u32>,
    /// The route's short name (`chat`, `messages`, …).
    pub route: &'static str,
    /// The status the mock answered.
    pub status: u16,
    /// A mid-stream fault was chosen for its stream.
    pub cut: bool,
}

impl Arrived {
    const EMPTY: Arrived = Arrived {
        t_ns: 0,
        seq: None,
        user: UserId::NONE,
        key: None,
        route: "",
        status: 0,
        cut: false,
    };
}

/// The recorded arrivals of one mock.
#[derive(Debug)]
pub struct Recorder {
    /// `CLOCK_MONOTONIC` ns at start-up: second 0 of the per-second counts.
    started_ns: u64,
    ring: Mutex<Ring>,
}

#[derive(Debug)]
struct Ring {
    entries: Box<[Arrived]>,
    /// The index the next arrival gets; arrival `i` sits at `entries[i % len]`.
    next: u64,
    /// For each second since start, (status, count) pairs.
    seconds: Vec<Vec<(u16, u64)>>,
}

/// What a report reads out of the ring, copied under the lock.
#[derive(Debug)]
pub struct Snapshot {
    pub started_ns: u64,
    pub next: u64,
    /// Arrivals with `i >= since` that fell out of the ring.
    pub dropped: u64,
    /// `(i, arrival)` of those with `i >= since` still in the ring, oldest first.
    pub arrivals: Vec<(u64, Arrived)>,
    pub seconds: Vec<Vec<(u16, u64)>>,
}

impl Recorder {
    /// A recorder of the last `capacity` arrivals (`None` for 0: recording is off).
    pub fn new(capacity: usize, started_ns: u64) -> Option<Recorder> {
        (capacity > 0).then(|| Recorder {
            started_ns,
            ring: Mutex::new(Ring {
                entries: vec![Arrived::EMPTY; capacity].into_boxed_slice(),
                next: 0,
                // An hour of seconds before the vector first grows.
                seconds: Vec::with_capacity(3600),
            }),
        })
    }

    /// Records one arrival.
    pub fn push(&self, arrived: Arrived) {
        let second = (arrived.t_ns.saturating_sub(self.started_ns) / 1_000_000_000) as usize;
        let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let len = ring.entries.len() as u64;
        let at = (ring.next % len) as usize;
        ring.entries[at] = arrived;
        ring.next += 1;
        if ring.seconds.len() <= second {
            ring.seconds.resize_with(second + 1, Vec::new);
        }
        let counts = &mut ring.seconds[second];
        match counts
            .iter_mut()
            .find(|(status, _)| *status == arrived.status)
        {
            Some((_, n)) => *n += 1,
            None => counts.push((arrived.status, 1)),
        }
    }

    /// The arrivals from index `since` on, and the per-second counts.
    pub fn snapshot(&self, since: u64) -> Snapshot {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let len = ring.entries.len() as u64;
        let oldest = ring.next.saturating_sub(len);
        let first = since.max(oldest);
        let arrivals = (first..ring.next)
            .map(|i| (i, ring.entries[(i % len) as usize]))
            .collect();
        Snapshot {
            started_ns: self.started_ns,
            next: ring.next,
            dropped: oldest.saturating_sub(since),
            arrivals,
            seconds: ring.seconds.clone(),
        }
    }
}

pub use report::{record_json, since_of};

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t_s: u64, status: u16) -> Arrived {
        Arrived {
            t_ns: 1_000 + t_s * 1_000_000_000,
            status,
            ..Arrived::EMPTY
        }
    }

    #[test]
    fn the_ring_keeps_the_last_n_and_counts_what_fell_out() {
        let recorder = Recorder::new(3, 1_000).unwrap();
        for (i, status) in [200, 200, 503, 200, 429].into_iter().enumerate() {
            recorder.push(at(i as u64 / 2, status));
        }
        let all = recorder.snapshot(0);
        assert_eq!(all.next, 5);
        assert_eq!(all.dropped, 2);
        let kept: Vec<(u64, u16)> = all.arrivals.iter().map(|(i, a)| (*i, a.status)).collect();
        assert_eq!(kept, [(2, 503), (3, 200), (4, 429)]);
        let later = recorder.snapshot(4);
        assert_eq!((later.dropped, later.arrivals.len()), (0, 1));
        let middle = recorder.snapshot(1);
        assert_eq!((middle.dropped, middle.arrivals.len()), (1, 3));
        assert!(recorder.snapshot(9).arrivals.is_empty());
        // Every arrival is counted in its second, those out of the ring too.
        assert_eq!(
            all.seconds,
            [vec![(200, 2)], vec![(503, 1), (200, 1)], vec![(429, 1)]]
        );
        assert!(Recorder::new(0, 0).is_none());
    }
}
