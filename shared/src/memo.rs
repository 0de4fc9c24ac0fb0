//! A thread's last reading of some bytes, kept so that the same bytes next time are read by one
//! comparison instead of a parse.
//!
//! A peer serving or sending fixed bytes repeats them: nginx's response heads and bodies, the
//! request heads and bodies of wrk, oha or an SDK in a loop. A reading kept from the last one
//! spares the next a parse: loadgen's response head and completion check, the mock's request
//! head and chat body. A peer whose every message differs (the mock's heads, which echo each
//! request's sequence number; loadgen's heads, which carry it; a provider's bodies, with their
//! ids) would only pay for the comparison and the copy. After `GIVE_UP` (4) misses in a row,
//! the kept reading is tried on two messages in every `RETRY` (256): the first is compared with
//! the stale reading and kept, the second compared with the first, so a peer that starts
//! repeating is seen again within that.
//!
//! Exact by construction: a reading is a function of the bytes it was read from (and of what
//! the `same` test of [`Memo::seen`] also checks), so the same bytes give the same reading.

/// A thread's last reading kept: the bytes it was read from, what they said, and how often the
/// next messages differed.
#[derive(Debug)]
pub struct Memo<T> {
    bytes: Vec<u8>,
    reading: Option<T>,
    repeats: Repeats,
    /// Whether the message being read is compared and kept (set by [`Memo::seen`]).
    trying: bool,
}

impl<T: Clone> Memo<T> {
    /// Nothing kept.
    pub const fn new() -> Memo<T> {
        Memo {
            bytes: Vec::new(),
            reading: None,
            repeats: Repeats::new(),
            trying: false,
        }
    }

    /// The kept reading and the length of its bytes, when they are this message's (`same` of
    /// the kept bytes and reading) and the message is compared at all; else the message is to
    /// be read and [`Memo::keep`] told.
    #[inline]
    pub fn seen(&mut self, same: impl FnOnce(&[u8], &T) -> bool) -> Option<(&T, usize)> {
        self.trying = self.repeats.trying();
        if !self.trying {
            return None;
        }
        let reading = self.reading.as_ref()?;
        if !same(&self.bytes, reading) {
            return None;
        }
        self.repeats.hit();
        Some((reading, self.bytes.len()))
    }

    /// The message `seen` did not know read as `reading` from `bytes`; kept when it was
    /// compared and `bytes` are at most `most` long.
    #[inline]
    pub fn keep(&mut self, bytes: &[u8], reading: &T, most: usize) {
        self.repeats.missed();
        if self.trying && bytes.len() <= most {
            self.bytes.clear();
            self.bytes.extend_from_slice(bytes);
            self.reading = Some(reading.clone());
        }
    }
}

impl<T: Clone> Default for Memo<T> {
    fn default() -> Memo<T> {
        Memo::new()
    }
}

/// Misses in a row after which most messages are not compared.
const GIVE_UP: u32 = 4;
/// One round of messages in which two are compared, once given up.
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

    /// Whether to compare this message with the kept reading, and keep its own.
    #[inline]
    fn trying(&self) -> bool {
        self.misses < GIVE_UP || self.misses % RETRY < 2
    }

    /// The message was the kept reading's.
    #[inline]
    fn hit(&mut self) {
        self.misses = 0;
    }

    /// The message was another (compared or not).
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
    fn every_message_is_tried_until_misses_pile_up_then_two_in_each_round() {
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

    #[test]
    fn a_reading_is_given_back_only_for_its_own_bytes_and_what_same_also_checks() {
        let mut memo = Memo::<u32>::new();
        assert_eq!(memo.seen(|_, _| true), None, "nothing kept yet");
        memo.keep(b"abc", &7, 16);
        assert_eq!(memo.seen(|kept, _| kept == b"abc"), Some((&7, 3)));
        assert_eq!(memo.seen(|kept, _| kept == b"abd"), None);
        memo.keep(b"abd", &8, 16);
        assert_eq!(
            memo.seen(|kept, &r| kept == b"abd" && r == 8),
            Some((&8, 3))
        );
        assert_eq!(memo.seen(|kept, &r| kept == b"abd" && r == 9), None);
        // Too long to keep: the last kept stays.
        memo.keep(b"0123456789abcdefXYZ", &9, 16);
        assert_eq!(memo.seen(|kept, _| kept == b"abd"), Some((&8, 3)));
    }

    #[test]
    fn once_given_up_a_message_not_compared_is_not_kept_and_the_retry_pair_finds_a_repeat() {
        let mut memo = Memo::<u32>::new();
        // Messages that all differ, read and told: given up after GIVE_UP.
        for i in 0..GIVE_UP {
            assert_eq!(memo.seen(|_, _| false), None);
            memo.keep(&i.to_le_bytes(), &i, 16);
        }
        // Not compared now (`same` is never asked), and not kept either.
        assert_eq!(memo.seen(|_, _| panic!("compared")), None);
        memo.keep(b"new", &100, 16);
        assert_eq!(memo.seen(|_, _| panic!("compared")), None);
        memo.keep(b"new", &100, 16);
        // Up to the round's end, then the pair: the first is compared with the stale reading
        // and kept, the second compared with the first and found.
        for _ in GIVE_UP + 2..RETRY {
            assert_eq!(memo.seen(|_, _| panic!("compared")), None);
            memo.keep(b"new", &100, 16);
        }
        assert_eq!(
            memo.seen(|kept, _| kept == b"new"),
            None,
            "the stale reading"
        );
        memo.keep(b"new", &100, 16);
        assert_eq!(memo.seen(|kept, _| kept == b"new"), Some((&100, 3)));
        // Found: every message is compared again.
        assert_eq!(memo.seen(|kept, _| kept == b"new"), Some((&100, 3)));
    }
}
