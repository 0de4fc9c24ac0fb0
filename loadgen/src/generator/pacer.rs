//! Waiting for an intended send time precisely, without burning a core.
//!
//! tokio's timer ticks every millisecond, far too coarse for 200 µs gaps at 5,000 req/s. The pacer
//! parks on a `timerfd` armed with an absolute `CLOCK_MONOTONIC` deadline (timer slack lowered to
//! 1 ns, so the kernel fires it on time), driven by tokio's `AsyncFd` so the worker's I/O keeps
//! running meanwhile, and wakes a little early; it then yields to the runtime in a loop for the
//! last few microseconds, reading the clock until the deadline has passed.
//!
//! One clock, `CLOCK_MONOTONIC`, both arms the timer and reads the time. `quanta`'s calibrated
//! TSC clock drifted from it by 1.73 µs per second in one process here (a calibration error that
//! differs per start): deadlines computed on one and armed on the other fired ever earlier, so a
//! worker spun ever longer and a long run measured more than a short one. The vDSO read costs
//! tens of nanoseconds, nothing beside the microseconds it measures; and the mock stamps its
//! answers on the same clock.

use std::io;
use std::time::Duration;

use gatebench_shared::timerfd::{lower_timer_slack, TimerFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::wire::clock::RunClock;

/// One worker's precise waiter.
#[derive(Debug)]
pub struct Pacer {
    clock: RunClock,
    timer: AsyncFd<TimerFd>,
    /// How long before a deadline the timerfd fires; the rest is spun (yielding to other tasks).
    spin_ns: u64,
}

impl Pacer {
    /// A pacer on the current thread (lowers this thread's timer slack) that spins the last
    /// `spin` before each deadline. Needs a tokio runtime.
    pub fn new(clock: RunClock, spin: Duration) -> io::Result<Pacer> {
        lower_timer_slack();
        // SAFETY: the TimerFd moves into the AsyncFd, which keeps it open (and the same
        // descriptor) for as long as it lives.
        let timer = unsafe { AsyncFd::register_with_interest(TimerFd::new()?, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(Pacer {
            clock,
            timer,
            spin_ns: spin.as_nanos() as u64,
        })
    }

    /// The run clock.
    #[cfg(test)]
    pub fn clock(&self) -> &RunClock {
        &self.clock
    }

    /// Returns once the run clock has reached `deadline_ns` (at once if it has).
    pub async fn wait_until(&self, deadline_ns: u64) -> io::Result<()> {
        loop {
            let now = self.clock.now_ns();
            if now >= deadline_ns {
                return Ok(());
            }
            let left = deadline_ns - now;
            if left > self.spin_ns {
                self.sleep_until(deadline_ns - self.spin_ns).await?;
            } else {
                // Let the worker's responses be read while we spin.
                tokio::task::yield_now().await;
            }
        }
    }

    async fn sleep_until(&self, offset_ns: u64) -> io::Result<()> {
        let mono = self.clock.start_mono_ns + offset_ns;
        let timer = self.timer.get_ref();
        timer.arm_at(mono)?;
        loop {
            let mut guard = self.timer.readable().await?;
            if timer.take_expiry()? {
                return Ok(());
            }
            guard.clear_ready();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_clock_reads_the_clock_the_timer_is_armed_on() {
        let clock = RunClock::starting_in(Duration::ZERO);
        let before = clock.now_ns();
        let stamp = clock.ns_of(gatebench_shared::clock::monotonic_ns());
        let after = clock.now_ns();
        assert!(
            before <= stamp && stamp <= after,
            "{before} {stamp} {after}"
        );
    }

    #[tokio::test]
    async fn waits_are_never_early_and_rarely_late() {
        let clock = RunClock::starting_in(Duration::from_millis(5));
        let pacer = Pacer::new(clock, Duration::from_micros(50)).unwrap();
        let mut late = Vec::new();
        for i in 0..200u64 {
            let due = 5_000_000 + i * 200_000; // every 200 µs
            pacer.wait_until(due).await.unwrap();
            let now = pacer.clock().now_ns();
            assert!(now >= due, "woke {} ns early", due - now);
            late.push(now - due);
        }
        late.sort_unstable();
        // On a loaded 2-core machine a few wakes are late; the median must not be.
        assert!(late[100] < 200_000, "median lateness {} ns", late[100]);
    }
}
