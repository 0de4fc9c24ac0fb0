//! A worker's kernel timer: a `timerfd` on `CLOCK_MONOTONIC` driven by the worker's runtime
//! (tokio's `AsyncFd`, so its I/O keeps running meanwhile), armed at an absolute instant of the
//! run clock, that says how late it woke. The pacer waits on one for each send and the answer
//! poller on another between its windows; each feeds the lateness to what it learns from.

use std::io;

use gatebench_shared::timerfd::TimerFd;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::wire::clock::RunClock;

/// One timerfd on the current thread's runtime.
#[derive(Debug)]
pub(crate) struct Alarm {
    timer: AsyncFd<TimerFd>,
}

impl Alarm {
    /// A new alarm. Needs a tokio runtime.
    pub(crate) fn new() -> io::Result<Alarm> {
        // SAFETY: the TimerFd moves into the AsyncFd, which keeps it open (and the same
        // descriptor) for as long as it lives.
        let timer = unsafe { AsyncFd::register_with_interest(TimerFd::new()?, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(Alarm { timer })
    }

    /// Sleeps until `offset_ns` of `clock`; returns how late it woke, in ns.
    pub(crate) async fn sleep_until(&self, clock: &RunClock, offset_ns: u64) -> io::Result<u64> {
        self.sleep_until_mono(clock.start_mono_ns + offset_ns).await
    }

    /// Sleeps until `mono` on `CLOCK_MONOTONIC` (ns); returns how late it woke, in ns.
    pub(crate) async fn sleep_until_mono(&self, mono: u64) -> io::Result<u64> {
        let timer = self.timer.get_ref();
        timer.arm_at(mono)?;
        loop {
            let mut guard = self.timer.readable().await?;
            if timer.take_expiry()? {
                return Ok(gatebench_shared::clock::monotonic_ns().saturating_sub(mono));
            }
            guard.clear_ready();
        }
    }
}
