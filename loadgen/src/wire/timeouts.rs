//! Request timeouts on timers kept from one request to the next.
//!
//! `tokio::time::timeout` files a new timer in the runtime's wheel for every request and takes it
//! out again when the answer comes first, as it nearly always does: about 550 instructions a
//! request against nginx, most of them the wheel's lock and lists. A worker's requests all wait
//! the same `--timeout` from their dispatch, so each deadline is nearly always later than the
//! one before (a session's turns, dispatched by their own alarms, can come out of order: that
//! timer is filed again, nothing worse). A timer kept from an earlier request and moved to a
//! later deadline stays where it is in the wheel: tokio notes the new deadline and files the
//! timer again only when the old one comes, once a timeout period. A worker keeps its idle
//! timers here and lends one to each request: moving and polling it cost about 280
//! instructions. Each deadline counts from a reading the caller already took (the request's
//! dispatch), not from a reading of its own.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::wire::clock::RunClock;

/// Idle timers kept at most: as many as a worker has had requests in flight at once, up to
/// this; a timer past it is dropped (taken out of the wheel) when its request ends.
const MOST_IDLE: usize = 4096;

/// A worker's idle timers (one thread's: the worker's requests are its tasks).
#[derive(Debug, Default)]
pub struct Timers {
    idle: RefCell<Vec<Pin<Box<Sleep>>>>,
}

impl Timers {
    /// No timers yet: each is made when no idle one is left.
    pub fn new() -> Timers {
        Timers::default()
    }

    /// `work`, or `None` once `d` has passed since `from_ns` on `clock` (a reading already
    /// taken, ns since the start of the run): [`RunClock::timeout`] on a kept timer. A
    /// `from_ns` of 0 (a reading at the run's zero or before it, which saturates to 0) counts
    /// from now, as does simulated time.
    pub async fn within<T>(
        &self,
        clock: &RunClock,
        from_ns: u64,
        d: Duration,
        work: impl Future<Output = T>,
    ) -> Option<T> {
        if clock.simulated_time().is_some() {
            return clock.timeout(d, work).await;
        }
        let from = match from_ns {
            0 => Instant::now(),
            at => clock.instant_of(at),
        };
        // Pinned where it lies: an exchange's future is kilobytes, and a move copies it all.
        let mut work = pin!(work);
        let mut timer = self.lend(from + d);
        // The work first, then the timer, as `tokio::time::timeout` polls them.
        let out = poll_fn(|cx| {
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            timer.as_mut().poll(cx).map(|()| None)
        })
        .await;
        self.give_back(timer);
        out
    }

    /// An idle timer moved to `deadline`, or a new one.
    fn lend(&self, deadline: Instant) -> Pin<Box<Sleep>> {
        match self.idle.borrow_mut().pop() {
            Some(mut timer) => {
                timer.as_mut().reset(deadline);
                timer
            }
            None => Box::pin(tokio::time::sleep_until(deadline)),
        }
    }

    /// `timer`, its request over, kept for the next one.
    fn give_back(&self, timer: Pin<Box<Sleep>>) {
        let mut idle = self.idle.borrow_mut();
        if idle.len() < MOST_IDLE {
            idle.push(timer);
        }
    }

    /// Idle timers kept now.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.idle.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
    }

    #[test]
    fn work_done_first_gives_its_output_and_keeps_the_timer() {
        runtime().block_on(async {
            let timers = Timers::new();
            let clock = RunClock::starting_in(Duration::ZERO);
            for i in 0..3 {
                let out = timers
                    .within(&clock, 0, Duration::from_secs(1), async move {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        i
                    })
                    .await;
                assert_eq!(out, Some(i));
                assert_eq!(timers.idle(), 1, "one timer, lent and given back each time");
            }
        });
    }

    #[test]
    fn work_still_going_at_the_deadline_times_out_exactly_then() {
        runtime().block_on(async {
            let timers = Timers::new();
            let clock = RunClock::starting_in(Duration::ZERO);
            // A kept timer first, its deadline long past by the next request's start.
            let _ = timers
                .within(&clock, 0, Duration::from_millis(5), std::future::ready(()))
                .await;
            tokio::time::sleep(Duration::from_secs(10)).await;
            for _ in 0..2 {
                let start = Instant::now();
                let out = timers
                    .within(
                        &clock,
                        0,
                        Duration::from_millis(300),
                        std::future::pending::<()>(),
                    )
                    .await;
                assert_eq!(out, None);
                assert_eq!(Instant::now() - start, Duration::from_millis(300));
            }
        });
    }

    #[test]
    fn requests_in_flight_at_once_each_get_a_timer_and_all_are_kept() {
        runtime().block_on(async {
            let timers = Timers::new();
            let clock = RunClock::starting_in(Duration::ZERO);
            let slow = |ms| {
                timers.within(&clock, 0, Duration::from_millis(50), async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    ms
                })
            };
            let (a, b, c) = tokio::join!(slow(10), slow(100), slow(20));
            assert_eq!((a, b, c), (Some(10), None, Some(20)));
            assert_eq!(timers.idle(), 3);
        });
    }

    #[test]
    fn the_deadline_counts_from_the_reading_given_not_from_the_call() {
        runtime().block_on(async {
            let timers = Timers::new();
            let clock = RunClock::starting_in(Duration::ZERO);
            // Dispatched 40 ms after the run's zero; its exchange begins 100 ms later.
            let dispatched_ns = 40_000_000;
            let deadline = clock.instant_of(dispatched_ns) + Duration::from_millis(300);
            tokio::time::sleep_until(clock.instant_of(dispatched_ns + 100_000_000)).await;
            let out = timers
                .within(
                    &clock,
                    dispatched_ns,
                    Duration::from_millis(300),
                    std::future::pending::<()>(),
                )
                .await;
            assert_eq!(out, None);
            // On the paused clock a timer fires at the first millisecond tick at or after it.
            let now = Instant::now();
            assert!(now >= deadline, "{:?} early", deadline - now);
            assert!(
                now - deadline < Duration::from_millis(1),
                "{:?} late",
                now - deadline
            );
        });
    }
}
