//! Simulated time: a clock that tests give the code that decides by time, in place of
//! `CLOCK_MONOTONIC` and the kernel's timer.
//!
//! Readings come from a counter; a sleep registers its instant; [`SimTime::run`] drives a body,
//! moving the counter to the earliest registered instant whenever every task on the runtime
//! waits, and waking whoever is due. "Every other task waits" is what tokio's paused time already detects: on a
//! current-thread runtime started paused (`#[tokio::test(start_paused = true)]`), tokio lets
//! its own clock jump only when nothing is ready to run, so the driver's tokio sleep ends
//! exactly then. So a run on simulated time is the same run every time, on any host, however
//! busy, and nanosecond-exact: what the code decides can be asserted to the nanosecond.
//!
//! A kernel timer wakes late; the simulation says how late with a [`Lateness`] model (none by
//! default), a function of the instant a wake-up was due, so a test can make a machine as slow
//! to wake as it likes, and seeded.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// How late a kernel timer's wake-up comes (ns), given the instant it was due (ns).
pub type Lateness = Box<dyn FnMut(u64) -> u64 + Send>;

/// Rounds of the driver with every task waiting and nobody on the clock after which the
/// simulation is stuck (a task waits on something that simulated time cannot bring).
const STUCK_ROUNDS: u32 = 10_000;

/// A simulated `CLOCK_MONOTONIC`, shared by every part of a test that reads time.
pub struct SimTime {
    state: Mutex<State>,
}

struct State {
    now_ns: u64,
    next_id: u64,
    /// Who waits for which instant, in the order they are due (the id breaks ties in the
    /// order they were registered).
    waiters: BTreeMap<(u64, u64), Waker>,
    lateness: Lateness,
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("SimTime")
            .field("now_ns", &state.now_ns)
            .field("waiters", &state.waiters.len())
            .finish()
    }
}

impl SimTime {
    /// Simulated time reading `start_ns`, whose kernel timers wake on time.
    pub fn new(start_ns: u64) -> Arc<SimTime> {
        Arc::new(SimTime {
            state: Mutex::new(State {
                now_ns: start_ns,
                next_id: 0,
                waiters: BTreeMap::new(),
                lateness: Box::new(|_| 0),
            }),
        })
    }

    /// Kernel timers wake as late as `lateness` says from now on.
    pub fn set_lateness(&self, lateness: Lateness) {
        self.lock().lateness = lateness;
    }

    /// The time now, ns.
    pub fn now_ns(&self) -> u64 {
        self.lock().now_ns
    }

    /// How late the model makes a kernel wake-up due at `due_ns`, ns.
    pub fn lateness_for(&self, due_ns: u64) -> u64 {
        (self.lock().lateness)(due_ns)
    }

    /// Ready once the time is `at_ns` or later.
    pub fn sleep_until(self: &Arc<SimTime>, at_ns: u64) -> SimSleep {
        SimSleep {
            time: self.clone(),
            at_ns,
            key: None,
        }
    }

    /// Runs `body` with time moving on whenever it, and every other task on this runtime,
    /// waits: to the earliest instant anyone sleeps for, waking everyone due by then. Call it on
    /// a current-thread runtime started paused. Panics (failing the test) when every task
    /// waits and nobody waits on the clock: the body would never end.
    pub async fn run<F: Future>(self: &Arc<SimTime>, body: F) -> F::Output {
        tokio::select! {
            biased;
            out = body => out,
            never = self.drive() => match never {},
        }
    }

    /// The driver of [`SimTime::run`]: never ends.
    async fn drive(&self) -> std::convert::Infallible {
        let mut idle = 0;
        loop {
            // On paused time this ends only once no other task can run.
            tokio::time::sleep(Duration::from_millis(1)).await;
            let due = self.advance();
            if due.is_empty() {
                idle += 1;
                assert!(
                    idle < STUCK_ROUNDS,
                    "simulated time is stuck: every task waits, and none on the clock"
                );
                continue;
            }
            idle = 0;
            due.into_iter().for_each(Waker::wake);
        }
    }

    /// Moves time to the earliest waiter's instant; takes every waiter due by then.
    fn advance(&self) -> Vec<Waker> {
        let mut state = self.lock();
        let Some((&(at_ns, _), _)) = state.waiters.first_key_value() else {
            return Vec::new();
        };
        let now_ns = state.now_ns.max(at_ns);
        state.now_ns = now_ns;
        let later = state.waiters.split_off(&(now_ns + 1, 0));
        std::mem::replace(&mut state.waiters, later)
            .into_values()
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding it has failed already; its state is still whole.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A sleep on simulated time ([`SimTime::sleep_until`]).
#[derive(Debug)]
pub struct SimSleep {
    time: Arc<SimTime>,
    at_ns: u64,
    key: Option<(u64, u64)>,
}

impl Future for SimSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let mut state = this.time.lock();
        if state.now_ns >= this.at_ns {
            if let Some(key) = this.key.take() {
                state.waiters.remove(&key);
            }
            return Poll::Ready(());
        }
        let key = *this.key.get_or_insert_with(|| {
            state.next_id += 1;
            (this.at_ns, state.next_id)
        });
        state.waiters.insert(key, cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for SimSleep {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.time.lock().waiters.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn time_moves_only_when_every_task_waits_and_to_the_instant_due() {
        let time = SimTime::new(1_000);
        let later = tokio::spawn({
            let time = time.clone();
            async move {
                time.sleep_until(5_000).await;
                time.now_ns()
            }
        });
        time.run(async {
            // Busy without waiting: the clock stands still.
            for _ in 0..100 {
                tokio::task::yield_now().await;
            }
            assert_eq!(time.now_ns(), 1_000);
            time.sleep_until(3_000).await;
            assert_eq!(time.now_ns(), 3_000);
            assert_eq!(later.await.unwrap(), 5_000);
            // A past instant is ready at once.
            time.sleep_until(10).await;
            assert_eq!(time.now_ns(), 5_000);
        })
        .await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_sleep_is_forgotten_and_lateness_is_the_models() {
        let time = SimTime::new(0);
        time.set_lateness(Box::new(|due| due / 10));
        assert_eq!(time.lateness_for(2_000), 200);
        let abandoned = time.sleep_until(1_000_000);
        drop(abandoned);
        time.run(time.sleep_until(500)).await;
        assert_eq!(time.now_ns(), 500);
        assert!(time.lock().waiters.is_empty());
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "simulated time is stuck")]
    async fn a_body_that_waits_on_nothing_the_clock_brings_fails() {
        let time = SimTime::new(0);
        let (_keep, never) = tokio::sync::oneshot::channel::<()>();
        let _ = time.run(never).await;
    }
}
