//! One worker's timer: the kernel timer, the queue of deadlines it is armed for, the margin it
//! fires early by, and the task that drives it. In tests the kernel timer and its clock can be
//! simulated time ([`gatebench_shared::sim`]) instead: the same queue, margin and driver, on a
//! clock the test sets, its wake-ups as late as the simulation's model says.
//!
//! The queue's lock also guards the margin ([`WakeMargin`]): the driver feeds it the lateness of
//! each kernel wake-up (now minus the instant the timerfd was armed for) and the time it spun,
//! both with the clock reading `fire` takes anyway, so the learning costs no system call.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::timerfd::{lower_timer_slack, TimerFd};
use gatebench_shared::wake::{calibrate, calibration_sleeps, Spin, WakeMargin};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The widest spin window: `--spin` takes at most 1 ms, and a learned margin is clamped to it.
const MAX_WINDOW_NS: u64 = crate::config::MAX_SPIN.as_nanos() as u64;

/// One runtime's timer: the kernel timer and the queue of deadlines it is armed for.
#[derive(Debug)]
pub(super) struct Shared {
    source: Source,
    queue: Mutex<Queue>,
    /// False once the driving task has ended (its runtime shut down): a later waiter on this
    /// thread starts a new timer.
    pub(super) alive: AtomicBool,
}

/// Where the timer reads the time and waits: `CLOCK_MONOTONIC` and a timerfd, or simulated time.
#[derive(Debug)]
enum Source {
    Kernel(TimerFd),
    #[cfg(test)]
    Simulated {
        time: Arc<gatebench_shared::sim::SimTime>,
        /// Told when the timer is armed, so the driver sleeps for the new instant.
        armed: tokio::sync::Notify,
    },
}

#[derive(Debug)]
pub(super) struct Queue {
    /// Earliest deadline on top.
    heap: BinaryHeap<Entry>,
    /// When the driver will look at the queue next at the latest: the time the timerfd is armed
    /// at, or now while it spins (`u64::MAX` when nothing waits).
    armed_ns: u64,
    /// When the timerfd was last armed: one armed for an instant already past fires at once,
    /// which says nothing of how late a sleep ends.
    armed_when_ns: u64,
    /// When the current spin began (`None`: not spinning).
    spin_from_ns: Option<u64>,
    /// How early to fire, and what the wake-ups were.
    margin: WakeMargin,
}

#[derive(Debug)]
struct Entry {
    due_ns: u64,
    waker: Waker,
}

// Reversed on the deadline, so std's max-heap keeps the earliest on top.
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.due_ns.cmp(&self.due_ns)
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.due_ns == other.due_ns
    }
}
impl Eq for Entry {}

impl Queue {
    /// How long before a deadline the timer fires, the rest spun.
    #[inline]
    fn window_ns(&self) -> u64 {
        self.margin.margin_ns().min(MAX_WINDOW_NS)
    }

    /// Feeds the margin one kernel wake-up read at `now_ns`: how late after the instant the
    /// timer was armed for. Not a sleep, so not fed: a timer armed for an instant already past
    /// (it fired at once, as for a deadline nearer than the margin), and a wake-up before the
    /// instant (a readiness left from an earlier expiry).
    #[inline]
    fn observe(&mut self, now_ns: u64) {
        if self.armed_ns == u64::MAX || self.armed_when_ns >= self.armed_ns {
            return;
        }
        if now_ns >= self.armed_ns {
            self.margin.observe(now_ns - self.armed_ns);
        }
    }

    /// Starts or ends the count of a spin.
    #[inline]
    fn account_spin(&mut self, now_ns: u64, spinning: bool) {
        match (self.spin_from_ns, spinning) {
            (None, true) => self.spin_from_ns = Some(now_ns),
            (Some(from), false) => {
                self.margin.spun(now_ns.saturating_sub(from));
                self.spin_from_ns = None;
            }
            _ => {}
        }
    }

    /// The margin's account as of `now_ns`, a spin under way included.
    pub(super) fn margin_at(&self, now_ns: u64) -> WakeMargin {
        let mut margin = self.margin.clone();
        if let Some(from) = self.spin_from_ns {
            margin.spun(now_ns.saturating_sub(from));
        }
        margin
    }

    /// Wakes every waiter whose deadline is at or before `now_ns`. The timer stays armed at or
    /// before the earliest deadline left, so no waiter is missed.
    pub(super) fn wake_due(&mut self, now_ns: u64) {
        while self.heap.peek().is_some_and(|e| e.due_ns <= now_ns) {
            // Invariant: peeked just above.
            let entry = self.heap.pop().expect("an entry was peeked");
            entry.waker.wake();
        }
    }
}

impl Shared {
    /// The time now, ns, on the clock the timer is armed on.
    #[inline]
    pub(super) fn now(&self) -> u64 {
        match &self.source {
            Source::Kernel(_) => monotonic_ns(),
            #[cfg(test)]
            Source::Simulated { time, .. } => time.now_ns(),
        }
    }

    /// Arms the timer to fire at `at_ns`.
    fn arm_at(&self, at_ns: u64) -> io::Result<()> {
        match &self.source {
            Source::Kernel(timerfd) => timerfd.arm_at(at_ns),
            #[cfg(test)]
            Source::Simulated { armed, .. } => {
                armed.notify_one();
                Ok(())
            }
        }
    }

    pub(super) fn queue(&self) -> MutexGuard<'_, Queue> {
        // A poisoned queue only means a waker panicked while the lock was held; the heap itself
        // is intact.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a wake-up at `due_ns` (read `now_ns`), re-arming the kernel timer when it is the
    /// new earliest.
    pub(super) fn add(
        &self,
        queue: &mut Queue,
        now_ns: u64,
        due_ns: u64,
        waker: Waker,
    ) -> io::Result<()> {
        queue.heap.push(Entry { due_ns, waker });
        let fire_at = due_ns.saturating_sub(queue.window_ns());
        if fire_at < queue.armed_ns {
            self.arm_at(fire_at)?;
            queue.armed_ns = fire_at;
            queue.armed_when_ns = now_ns;
        }
        Ok(())
    }

    /// Wakes every waiter whose deadline has passed (after feeding the margin the lateness of
    /// this wake-up, when the kernel timer caused it). Then, when the next deadline is within
    /// the spin window, returns true and leaves the kernel timer alone (the driver looks again
    /// after one yield); otherwise arms the timer a spin window before the next deadline.
    fn fire(&self, kernel_woke: bool) -> io::Result<bool> {
        let mut queue = self.queue();
        let now = self.now();
        if kernel_woke {
            queue.observe(now);
        }
        queue.wake_due(now);
        let window = queue.window_ns();
        let (armed_ns, spinning) = match queue.heap.peek() {
            Some(next) if next.due_ns <= now + window => (now, true),
            Some(next) => {
                let fire_at = next.due_ns - window;
                self.arm_at(fire_at)?;
                queue.armed_when_ns = now;
                (fire_at, false)
            }
            // Left as it is: the expiry not taken keeps the descriptor readable, but its edge is
            // spent, and the next `arm_at` resets it (one system call fewer on the way to an
            // answer that was the only waiter).
            None => (u64::MAX, false),
        };
        queue.armed_ns = armed_ns;
        queue.account_spin(now, spinning);
        Ok(spinning)
    }
}

/// The timerfd as `AsyncFd` needs it: shared with the waiters, who arm it.
struct Driven(Arc<Shared>);

impl AsRawFd for Driven {
    fn as_raw_fd(&self) -> RawFd {
        match &self.0.source {
            Source::Kernel(timerfd) => timerfd.as_raw_fd(),
            // Invariant: only a kernel timer is driven through `AsyncFd`.
            #[cfg(test)]
            Source::Simulated { .. } => unreachable!("a simulated timer has no descriptor"),
        }
    }
}

/// Marks the timer dead when its driving task ends, however it ends.
struct Alive(Arc<Shared>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.alive.store(false, Relaxed);
    }
}

/// The task that waits on the kernel timer and wakes the waiters that are due.
async fn drive(timer: AsyncFd<Driven>, _alive: Alive) {
    let shared = timer.get_ref().0.clone();
    let mut spinning = false;
    loop {
        let kernel_woke = !spinning;
        if spinning {
            tokio::task::yield_now().await;
        } else {
            let Ok(mut ready) = timer.readable().await else {
                return;
            };
            // No read of the expiry count: `fire` re-arms the timer, which resets it, so the
            // next expiry is a new edge (one system call per wake-up, not two); with nothing
            // left to wait for, the next `add` re-arms it.
            ready.clear_ready();
        }
        spinning = match shared.fire(kernel_woke) {
            Ok(spinning) => spinning,
            Err(err) => {
                gatebench_shared::say!("mock-upstream: precise timer failed: {err}");
                return;
            }
        };
    }
}

/// Starts a timer for the current thread's runtime: a timerfd and the task driving it, spinning
/// before each deadline as `spin` says. With [`Spin::Auto`] the margin is first calibrated on
/// the timerfd itself, blocking the thread for a few tens of milliseconds. Must be called within
/// a tokio runtime.
pub(super) fn start(spin: Spin) -> io::Result<Arc<Shared>> {
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    lower_timer_slack();
    let timerfd = TimerFd::new()?;
    let mut margin = WakeMargin::new(spin);
    if spin == Spin::Auto {
        calibrate(&timerfd, &mut margin, &calibration_sleeps())?;
    }
    let shared = Arc::new(Shared::new(Source::Kernel(timerfd), margin));
    let driven = {
        let _entered = runtime.enter();
        // SAFETY: the descriptor is the timerfd `shared` owns; `Driven` holds `shared`, so it
        // stays open, and the same descriptor, for as long as the `AsyncFd` lives.
        unsafe { AsyncFd::register_with_interest(Driven(shared.clone()), Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?
    };
    // The guard is an argument, so it is dropped even if the task never runs.
    runtime.spawn(drive(driven, Alive(shared.clone())));
    Ok(shared)
}

impl Shared {
    fn new(source: Source, margin: WakeMargin) -> Shared {
        Shared {
            source,
            queue: Mutex::new(Queue {
                heap: BinaryHeap::with_capacity(1024),
                armed_ns: u64::MAX,
                armed_when_ns: 0,
                spin_from_ns: None,
                margin,
            }),
            alive: AtomicBool::new(true),
        }
    }
}

/// Starts a timer on simulated `time` for the current thread's runtime, its margin as `spin`
/// says (not calibrated: an auto margin starts at its starting margin, 50 µs, and learns from
/// the simulation's wake-ups). Its driver sleeps on `time` for each instant the timer is armed at, as late as
/// the simulation's lateness model says, and each turn of a spin lets 1 µs pass.
#[cfg(test)]
pub(super) fn start_simulated(
    time: &Arc<gatebench_shared::sim::SimTime>,
    spin: Spin,
) -> Arc<Shared> {
    let source = Source::Simulated {
        time: time.clone(),
        armed: tokio::sync::Notify::new(),
    };
    let shared = Arc::new(Shared::new(source, WakeMargin::new(spin)));
    tokio::spawn(drive_simulated(shared.clone(), Alive(shared.clone())));
    shared
}

/// [`drive`] on simulated time.
#[cfg(test)]
async fn drive_simulated(shared: Arc<Shared>, _alive: Alive) {
    let Source::Simulated { time, armed } = &shared.source else {
        return;
    };
    let mut spinning = false;
    loop {
        let kernel_woke = !spinning;
        if spinning {
            time.sleep_until(time.now_ns() + 1_000).await;
        } else {
            let at = shared.queue().armed_ns;
            if at == u64::MAX {
                armed.notified().await;
                continue;
            }
            let late = time.lateness_for(at);
            tokio::select! {
                biased;
                () = time.sleep_until(at + late) => {}
                () = armed.notified() => continue,
            }
        }
        spinning = match shared.fire(kernel_woke) {
            Ok(spinning) => spinning,
            Err(_) => return,
        };
    }
}
