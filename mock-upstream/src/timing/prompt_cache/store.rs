//! The entries of the prompt cache: prefix hashes (with their key's scope mixed in) and when
//! each expires, bounded in number, the least recently used dropped first. Plain data behind
//! the cache's one lock.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// One remembered prefix.
#[derive(Debug, Clone, Copy)]
struct Entry {
    expires: Instant,
    /// Its place in the use order (a key of `order`).
    used: u64,
}

/// Every entry of every key.
#[derive(Debug)]
pub struct Store {
    entries: HashMap<u64, Entry>,
    /// Entries by last use, oldest first.
    order: BTreeMap<u64, u64>,
    tick: u64,
    bound: usize,
}

impl Store {
    pub fn new(bound: usize) -> Store {
        Store {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            bound,
        }
    }

    /// Whether `hash` is remembered and unexpired at `now`; a hit lives `ttl` longer.
    pub fn hit(&mut self, hash: u64, now: Instant, ttl: Duration) -> bool {
        match self.entries.get(&hash).copied() {
            Some(entry) if entry.expires > now => {
                self.put(hash, now + ttl.max(entry.expires - now));
                true
            }
            Some(entry) => {
                self.order.remove(&entry.used);
                self.entries.remove(&hash);
                false
            }
            None => false,
        }
    }

    /// Remembers `hash` until `expires`, dropping the least recently used past the bound.
    pub fn put(&mut self, hash: u64, expires: Instant) {
        self.tick += 1;
        let used = self.tick;
        if let Some(old) = self.entries.insert(hash, Entry { expires, used }) {
            self.order.remove(&old.used);
        }
        self.order.insert(used, hash);
        while self.entries.len() > self.bound {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            self.entries.remove(&oldest);
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_refresh_on_a_hit_and_the_oldest_go_past_the_bound() {
        let t0 = Instant::now();
        let ttl = Duration::from_secs(10);
        let mut store = Store::new(2);
        store.put(1, t0 + ttl);
        assert!(store.hit(1, t0 + Duration::from_secs(9), ttl));
        // The hit at 9 s keeps it to 19 s.
        assert!(store.hit(1, t0 + Duration::from_secs(18), ttl));
        assert!(!store.hit(1, t0 + Duration::from_secs(40), ttl));
        assert_eq!(store.len(), 0);
        store.put(1, t0 + ttl);
        store.put(2, t0 + ttl);
        assert!(store.hit(1, t0, ttl));
        store.put(3, t0 + ttl);
        assert_eq!(store.len(), 2);
        assert!(!store.hit(2, t0, ttl), "2 was used least recently");
        assert!(store.hit(1, t0, ttl) && store.hit(3, t0, ttl));
    }
}
