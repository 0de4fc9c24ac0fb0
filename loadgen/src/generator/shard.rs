//! Sharding one schedule over several loadgen processes (`--shard I/N`), each on its own host.
//!
//! Shard `I` of `N` takes the whole schedule's slots `i ≡ I (mod N)`, so the shards together send
//! exactly the one schedule at the plan's rate, each at rate/N. Within a shard, worker `w` of `W`
//! takes every `W`-th of the shard's slots: the slots `i ≡ I + N·w (mod N·W)`.

use crate::model::load::Shard;

/// Most shards a schedule may be split into.
pub const MAX_SHARDS: u64 = 10_000;

impl Shard {
    /// Parses `I/N`, like `2/4` (shard indexes count from 0, as Kubernetes' completion index and
    /// a Slurm array from 0), or `slot:S/N` with `S` from 1 to N, as Docker Swarm numbers the
    /// tasks of a replicated service (`{{.Task.Slot}}`): `slot:1/4` is shard `0/4`.
    pub fn parse(text: &str) -> Option<Shard> {
        let text = text.trim();
        let (from, text) = match text.strip_prefix("slot:") {
            Some(rest) => (1, rest),
            None => (0, text),
        };
        let (index, count) = text.split_once('/')?;
        let index = index.trim().parse::<u64>().ok()?.checked_sub(from)?;
        let count: u64 = count.trim().parse().ok()?;
        ((1..=MAX_SHARDS).contains(&count) && index < count).then_some(Shard { index, count })
    }

    /// The first slot and the stride of worker `worker` of `workers` within this shard.
    pub fn slots(self, worker: u64, workers: u64) -> (u64, u64) {
        (self.index + self.count * worker, self.count * workers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::schedule::Schedule;
    use crate::model::load::Arrival;

    #[test]
    fn shards_parse_from_index_and_count() {
        assert_eq!(Shard::parse("2/4"), Some(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse(" 0/1 "), Some(Shard::WHOLE));
        assert_eq!(Shard::parse("slot:1/4"), Some(Shard { index: 0, count: 4 }));
        assert_eq!(Shard::parse("slot:4/4"), Some(Shard { index: 3, count: 4 }));
        for bad in [
            "4/4", "1", "-1/2", "a/2", "1/0", "0/10001", "", "slot:0/4", "slot:5/4", "slot:",
        ] {
            assert_eq!(Shard::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn shards_and_their_workers_split_one_schedule_exactly() {
        for arrival in [Arrival::Constant, Arrival::Poisson] {
            let whole: Vec<_> = Schedule::new(arrival, 600.0, 3, 0, 1).take(600).collect();
            let mut union = Vec::new();
            for (index, workers) in [(0, 2), (1, 1), (2, 3)] {
                let shard = Shard { index, count: 3 };
                for w in 0..workers {
                    let (first, stride) = shard.slots(w, workers);
                    let mine: Vec<_> = Schedule::new(arrival, 600.0, 3, first, stride)
                        .take_while(|(i, _)| *i < 600)
                        .collect();
                    assert!(mine.iter().all(|(i, _)| i % 3 == index), "{arrival:?}");
                    union.extend(mine);
                }
            }
            union.sort_unstable();
            assert_eq!(union, whole, "{arrival:?}");
        }
    }
}
