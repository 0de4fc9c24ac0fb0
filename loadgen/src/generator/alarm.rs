//! A worker's kernel timer: a `timerfd` on `CLOCK_MONOTONIC` driven by the worker's runtime
//! (tokio's `AsyncFd`, so its I/O keeps running meanwhile), armed at an absolute instant of the
//! run clock, that says how late it woke. The pacer waits on one for each send and the answer
//! poller on another between its windows; each feeds the lateness to what it learns from.
//!
//! On a clock of simulated time ([`RunClock::simulated`]) the alarm sleeps on that time
//! instead, as late as its lateness model says, and a spin's turn lets a little of it pass: the
//! same decisions, made on a clock a test sets.

use std::io;
use std::sync::Arc;

use gatebench_shared::sim::SimTime;
use gatebench_shared::timerfd::TimerFd;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::wire::clock::RunClock;

/// How much simulated time one turn of a spin takes: a spin reads the clock in a loop, and
/// simulated time moves only when every task waits, so each turn waits this long.
pub(crate) const SIM_SPIN_TURN_NS: u64 = 1_000;

/// One timer on the current thread's runtime.
#[derive(Debug)]
pub(crate) struct Alarm {
    timer: Timer,
}

#[derive(Debug)]
enum Timer {
    Kernel(AsyncFd<TimerFd>),
    Simulated(Arc<SimTime>),
}

impl Alarm {
    /// A new kernel alarm. Needs a tokio runtime.
    pub(crate) fn new() -> io::Result<Alarm> {
        // SAFETY: the TimerFd moves into the AsyncFd, which keeps it open (and the same
        // descriptor) for as long as it lives.
        let timer = unsafe { AsyncFd::register_with_interest(TimerFd::new()?, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(Alarm {
            timer: Timer::Kernel(timer),
        })
    }

    /// An alarm on the time `clock` reads: the kernel's, or a simulation's.
    pub(crate) fn for_clock(clock: &RunClock) -> io::Result<Alarm> {
        match clock.simulated_time() {
            Some(time) => Ok(Alarm {
                timer: Timer::Simulated(time.clone()),
            }),
            None => Alarm::new(),
        }
    }

    /// Sleeps until `offset_ns` of `clock`; returns how late it woke, in ns.
    pub(crate) async fn sleep_until(&self, clock: &RunClock, offset_ns: u64) -> io::Result<u64> {
        self.sleep_until_mono(clock.start_mono_ns + offset_ns).await
    }

    /// Sleeps until `mono` on `CLOCK_MONOTONIC` (ns); returns how late it woke, in ns.
    pub(crate) async fn sleep_until_mono(&self, mono: u64) -> io::Result<u64> {
        match &self.timer {
            Timer::Kernel(fd) => {
                let timer = fd.get_ref();
                timer.arm_at(mono)?;
                loop {
                    let mut guard = fd.readable().await?;
                    if timer.take_expiry()? {
                        return Ok(gatebench_shared::clock::monotonic_ns().saturating_sub(mono));
                    }
                    guard.clear_ready();
                }
            }
            Timer::Simulated(time) => {
                let late = time.lateness_for(mono);
                time.sleep_until(mono + late).await;
                Ok(time.now_ns().saturating_sub(mono))
            }
        }
    }

    /// One turn of a spin: lets the runtime's other tasks run (on simulated time, for
    /// [`SIM_SPIN_TURN_NS`]).
    pub(crate) async fn spin_turn(&self) {
        match &self.timer {
            Timer::Kernel(_) => tokio::task::yield_now().await,
            Timer::Simulated(time) => time.sleep_until(time.now_ns() + SIM_SPIN_TURN_NS).await,
        }
    }
}
