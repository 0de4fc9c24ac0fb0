//! Whether a reading kept from the last response is worth comparing the next one with.
//!
//! A target serving fixed bytes repeats its heads and bodies, and a reading kept from the last
//! one spares the next a parse (`http1::head::parse_seen`, `completion::is_completion_seen`).
//! A target whose every answer differs (the mock's heads, which echo each request's sequence
//! number; a provider's bodies, with their ids) would only pay for the comparison and the copy.
//! After [`GIVE_UP`] misses in a row, the kept reading is tried on two answers in every
//! [`RETRY`]: the first is compared with the stale reading and kept, the second compared with
//! the first, so a target that starts repeating is seen again within that.

/// A thread's last reading kept: the bytes it was read from, what they said, and how often the
/// next answers differed. The memos of `http1::head` and `completion` are each one of these.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    bytes: Vec<u8>,
    reading: Option<T>,
    repeats: Repeats,
    /// Whether the answer being read is compared and kept (set by [`Kept::seen`]).
    trying: bool,
}

impl<T: Clone> Kept<T> {
    /// Nothing kept.
    pub(crate) const fn new() -> Kept<T> {
        Kept {
            bytes: Vec::new(),
            reading: None,
            repeats: Repeats::new(),
            trying: false,
        }
    }

    /// The kept reading and the length of its bytes, when they are this answer's (`same` of the
    /// kept bytes) and the answer is compared at all; else the answer is to be read and
    /// [`Kept::keep`] told.
    #[inline]
    pub(crate) fn seen(&mut self, same: impl FnOnce(&[u8]) -> bool) -> Option<(T, usize)> {
        self.trying = self.repeats.trying();
        let reading = self.reading.as_ref().filter(|_| self.trying)?;
        if !same(&self.bytes) {
            return None;
        }
        let seen = (reading.clone(), self.bytes.len());
        self.repeats.hit();
        Some(seen)
    }

    /// The answer `seen` did not know read as `reading` from `bytes`; kept when it was
    /// compared and `bytes` are at most `most` long.
    #[inline]
    pub(crate) fn keep(&mut self, bytes: &[u8], reading: &T, most: usize) {
        self.repeats.missed();
        if self.trying && bytes.len() <= most {
            self.bytes.clear();
            self.bytes.extend_from_slice(bytes);
            self.reading = Some(reading.clone());
        }
    }
}

/// Misses in a row after which most answers are not compared.
const GIVE_UP: u32 = 4;
/// One round of answers in which two are compared, once given up.
const RETRY: u32 = 256;

/// A kept reading's record of misses.
#[derive(Debug, Default)]
struct Repeats {
    misses: u32,
}

impl Repeats {
    /// No misses yet.
    const fn new() -> Repeats {
        Repeats { misses: 0 }
    }

    /// Whether to compare this answer with the kept reading, and keep its own.
    #[inline]
    fn trying(&self) -> bool {
        self.misses < GIVE_UP || self.misses % RETRY < 2
    }

    /// The answer was the kept reading's.
    #[inline]
    fn hit(&mut self) {
        self.misses = 0;
    }

    /// The answer was another (compared or not).
    #[inline]
    fn missed(&mut self) {
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
