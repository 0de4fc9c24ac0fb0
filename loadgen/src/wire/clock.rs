//! The run's clock: one `CLOCK_MONOTONIC` for every deadline and every reading, counted from
//! the start of the run; or, in tests, simulated time ([`gatebench_shared::sim`]) in its place,
//! read and waited on through the same calls.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::sim::SimTime;

/// The run's clock: nanoseconds since the start of the run, on `CLOCK_MONOTONIC`.
#[derive(Debug, Clone)]
pub struct RunClock {
    /// `CLOCK_MONOTONIC` at the start of the run, in ns.
    pub(crate) start_mono_ns: u64,
    /// The start of the run as a `std::time::Instant` (the same `CLOCK_MONOTONIC`, read beside
    /// `start_mono_ns`), for tokio's timers; unused on simulated time.
    start_instant: std::time::Instant,
    /// Where readings come from.
    time: Time,
}

/// Within this of each other, an `Instant` and a `CLOCK_MONOTONIC` reading count as one instant.
const TOGETHER: Duration = Duration::from_micros(20);

/// An `Instant` and a `CLOCK_MONOTONIC` reading (ns) of about one instant: the `Instant` first,
/// the pair read again while a preemption came between them and the next `Instant` (a few
/// tries). An instant made from a reading ([`RunClock::instant_of`]) is early by their gap:
/// tens of nanoseconds, far below tokio's millisecond timers.
fn read_together() -> (std::time::Instant, u64) {
    let mut pair = (std::time::Instant::now(), monotonic_ns());
    for _ in 0..16 {
        if pair.0.elapsed() < TOGETHER {
            break;
        }
        pair = (std::time::Instant::now(), monotonic_ns());
    }
    pair
}

/// The source of a [`RunClock`]'s readings.
#[derive(Debug, Clone)]
enum Time {
    Monotonic,
    Simulated(Arc<SimTime>),
}

impl RunClock {
    /// A clock whose zero is `lead` from now (so workers can get ready before the first slot).
    pub fn starting_in(lead: Duration) -> RunClock {
        let (instant, mono_ns) = read_together();
        RunClock {
            start_mono_ns: mono_ns + lead.as_nanos() as u64,
            start_instant: instant + lead,
            time: Time::Monotonic,
        }
    }

    /// A clock on simulated time whose zero is `lead` from its now: for tests, whose waits
    /// ([`crate::generator::alarm::Alarm`]) then sleep on `time` too.
    pub fn simulated(time: &Arc<SimTime>, lead: Duration) -> RunClock {
        RunClock {
            start_mono_ns: time.now_ns() + lead.as_nanos() as u64,
            start_instant: std::time::Instant::now(),
            time: Time::Simulated(time.clone()),
        }
    }

    /// The simulated time this clock reads, if it is not the real one.
    pub(crate) fn simulated_time(&self) -> Option<&Arc<SimTime>> {
        match &self.time {
            Time::Monotonic => None,
            Time::Simulated(time) => Some(time),
        }
    }

    /// A reading of this clock's `CLOCK_MONOTONIC` (or its simulation), ns.
    #[inline]
    pub fn mono_ns(&self) -> u64 {
        match &self.time {
            Time::Monotonic => monotonic_ns(),
            Time::Simulated(time) => time.now_ns(),
        }
    }

    /// Nanoseconds since the start of the run (0 before it).
    pub fn now_ns(&self) -> u64 {
        self.ns_of(self.mono_ns())
    }

    /// Nanoseconds until the start of the run (0 once it started).
    pub fn until_start_ns(&self) -> u64 {
        self.start_mono_ns.saturating_sub(self.mono_ns())
    }

    /// Sleeps for `d`, coarsely (tokio's timer, to the millisecond), on this clock: for
    /// timeouts and graces, not for deadlines that need precision (those use an alarm).
    pub async fn sleep(&self, d: Duration) {
        match &self.time {
            Time::Monotonic => tokio::time::sleep(d).await,
            Time::Simulated(time) => time.sleep_until(time.now_ns() + d.as_nanos() as u64).await,
        }
    }

    /// `work`, or `None` once `d` has passed on this clock.
    pub async fn timeout<T>(&self, d: Duration, work: impl Future<Output = T>) -> Option<T> {
        // Pinned where it lies: handed on as a pointer, not moved (an exchange's future is
        // kilobytes, and each move was a copy of all of it, five a request).
        let work = std::pin::pin!(work);
        match &self.time {
            Time::Monotonic => tokio::time::timeout(d, work).await.ok(),
            Time::Simulated(_) => tokio::select! {
                biased;
                out = work => Some(out),
                () = self.sleep(d) => None,
            },
        }
    }

    /// The instant `ns` after the start of the run, for tokio's timers: a deadline from a
    /// reading already taken, without reading the clock again. Real time only.
    pub fn instant_of(&self, ns: u64) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.start_instant + Duration::from_nanos(ns))
    }

    /// A `CLOCK_MONOTONIC` reading (ns) as nanoseconds since the start of the run (0 before it).
    pub fn ns_of(&self, mono_ns: u64) -> u64 {
        mono_ns.saturating_sub(self.start_mono_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_made_from_a_reading_lies_between_the_readings_around_it() {
        // `at` is early by at most the time the clock took to make (its two readings lie
        // between `b0` and `b1`), and never later than a reading after it.
        let b0 = tokio::time::Instant::now();
        let clock = RunClock::starting_in(Duration::ZERO);
        let b1 = tokio::time::Instant::now();
        for _ in 0..1000 {
            let before = tokio::time::Instant::now();
            let ns = clock.now_ns();
            let after = tokio::time::Instant::now();
            let at = clock.instant_of(ns);
            assert!(at <= after, "{at:?} after {after:?}");
            assert!(at + (b1 - b0) >= before, "{at:?} {before:?} {:?}", b1 - b0);
        }
    }

    #[test]
    fn instants_are_as_far_apart_as_their_readings() {
        let clock = RunClock::starting_in(Duration::from_millis(3));
        assert_eq!(
            clock.instant_of(5_000_123) - clock.instant_of(2_000_000),
            Duration::from_nanos(3_000_123)
        );
    }
}
