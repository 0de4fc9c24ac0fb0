//! Whether a reading kept from the last response is worth comparing the next one with.
//!
//! A target serving fixed bytes repeats its heads and bodies, and a reading kept from the last
//! one spares the next a parse (`http1::head::parse_seen`, `completion::is_completion_seen`).
//! A target whose every answer differs (the mock's heads, which echo each request's sequence
//! number; a provider's bodies, with their ids) would only pay for the comparison and the copy.
//! After [`GIVE_UP`] misses in a row, the kept reading is tried on two answers in every
//! [`RETRY`]: the first is compared with the stale reading and kept, the second compared with
//! the first, so a target that starts repeating is seen again within that.

/// Misses in a row after which most answers are not compared.
const GIVE_UP: u32 = 4;
/// One round of answers in which two are compared, once given up.
const RETRY: u32 = 256;

/// A kept reading's record of misses.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    misses: u32,
}

impl Repeats {
    /// No misses yet.
    pub(crate) const fn new() -> Repeats {
        Repeats { misses: 0 }
    }

    /// Whether to compare this answer with the kept reading, and keep its own.
    #[inline]
    pub(crate) fn trying(&self) -> bool {
        self.misses < GIVE_UP || self.misses % RETRY < 2
    }

    /// The answer was the kept reading's.
    #[inline]
    pub(crate) fn hit(&mut self) {
        self.misses = 0;
    }

    /// The answer was another (compared or not).
    #[inline]
    pub(crate) fn missed(&mut self) {
        // Wrapping back into the first misses retries at once, as a new run would.
        self.misses = self.misses.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_is_tried_until_misses_pile_up_then_two_in_each_round() {
        let mut repeats = Repeats::default();
        let mut tried = Vec::new();
        for i in 0..(2 * RETRY + 3) {
            if repeats.trying() {
                tried.push(i);
            }
            repeats.missed();
        }
        let r = RETRY;
        assert_eq!(tried, [0, 1, 2, 3, r, r + 1, 2 * r, 2 * r + 1]);
        repeats.hit();
        assert!(repeats.trying());
    }
}
