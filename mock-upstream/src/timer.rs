//! The precise timer behind every delayed answer and stream event.
//!
//! tokio's timer ticks every millisecond and rounds each deadline up to its next tick: a 3 ms
//! latency left after ~4.1 ms and stream events ~1.4 ms late. Here each worker runtime owns one
//! kernel timer instead: a `timerfd` on `CLOCK_MONOTONIC`, armed at the earliest absolute deadline
//! of a queue (a binary heap of deadlines and wakers) and driven by one task through tokio's
//! `AsyncFd`. At each expiry that task wakes every waiter whose deadline has passed, all in that
//! one wake-up, and re-arms at the next deadline. By default nothing spins: an idle worker sleeps
//! in `epoll_wait` until the kernel fires, and an event is late by the kernel's wake-up (tens of
//! microseconds on a VM). With `--spin`, the timer fires that much before the earliest deadline
//! and the task then yields in a loop (the worker's other tasks and I/O still run) until each
//! deadline within the spin window has passed, for a lateness of a microsecond or two. A waiter
//! costs a heap push (no allocation once the heap has grown), so 10,000 open streams cost 10,000
//! entries of 32 bytes.
//!
//! Deadlines are nanoseconds of [`gatebench_shared::clock::monotonic_ns`], the clock the timer is
//! armed on, so no second clock can drift against it. tokio's timer stays for the coarse limits
//! (header, body and send timeouts, shutdown grace) where a millisecond does not matter.
//!
//! A waiter dropped before its deadline (a client gone mid-stream) leaves its entry in the queue
//! until the deadline passes; waking a finished task does nothing.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::timerfd::{lower_timer_slack, TimerFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

thread_local! {
    /// This thread's timer, started by the first waiter (or by [`install`]).
    static LOCAL: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// One runtime's timer: the kernel timer and the queue of deadlines it is armed for.
#[derive(Debug)]
struct Shared {
    timerfd: TimerFd,
    queue: Mutex<Queue>,
    /// How long before a deadline the timer fires, the rest spun (`--spin`; 0: no spin).
    spin_ns: u64,
    /// False once the driving task has ended (its runtime shut down): a later waiter on this
    /// thread starts a new timer.
    alive: AtomicBool,
}

#[derive(Debug)]
struct Queue {
    /// Earliest deadline on top.
    heap: BinaryHeap<Entry>,
    /// When the driver will look at the queue next at the latest: the time the timerfd is armed
    /// at, or now while it spins (`u64::MAX` when nothing waits).
    armed_ns: u64,
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

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // A poisoned queue only means a waker panicked while the lock was held; the heap itself
        // is intact.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a wake-up at `due_ns`, re-arming the kernel timer when it is the new earliest.
    fn add(&self, queue: &mut Queue, due_ns: u64, waker: Waker) -> io::Result<()> {
        queue.heap.push(Entry { due_ns, waker });
        let fire_at = due_ns.saturating_sub(self.spin_ns);
        if fire_at < queue.armed_ns {
            self.timerfd.arm_at(fire_at)?;
            queue.armed_ns = fire_at;
        }
        Ok(())
    }

    /// Wakes every waiter whose deadline is at or before `now_ns`. The timer stays armed at or
    /// before the earliest deadline left, so no waiter is missed.
    fn wake_due(queue: &mut Queue, now_ns: u64) {
        while queue.heap.peek().is_some_and(|e| e.due_ns <= now_ns) {
            // Invariant: peeked just above.
            let entry = queue.heap.pop().expect("an entry was peeked");
            entry.waker.wake();
        }
    }

    /// Wakes every waiter whose deadline has passed. Then, when the next deadline is within the
    /// spin window, returns true and leaves the kernel timer alone (the driver looks again after
    /// one yield); otherwise arms the timer a spin window before the next deadline.
    fn fire(&self) -> io::Result<bool> {
        let mut queue = self.queue();
        let now = monotonic_ns();
        Self::wake_due(&mut queue, now);
        let (armed_ns, spinning) = match queue.heap.peek() {
            Some(next) if next.due_ns <= now + self.spin_ns => (now, true),
            Some(next) => {
                let fire_at = next.due_ns - self.spin_ns;
                self.timerfd.arm_at(fire_at)?;
                (fire_at, false)
            }
            // Left as it is: the expiry not taken keeps the descriptor readable, but its edge is
            // spent, and the next `arm_at` resets it (one system call fewer on the way to an
            // answer that was the only waiter).
            None => (u64::MAX, false),
        };
        queue.armed_ns = armed_ns;
        Ok(spinning)
    }
}

/// The timerfd as `AsyncFd` needs it: shared with the waiters, who arm it.
struct Driven(Arc<Shared>);

impl AsRawFd for Driven {
    fn as_raw_fd(&self) -> RawFd {
        self.0.timerfd.as_raw_fd()
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
        spinning = match shared.fire() {
            Ok(spinning) => spinning,
            Err(err) => {
                gatebench_shared::say!("mock-upstream: precise timer failed: {err}");
                return;
            }
        };
    }
}

/// Starts a timer for the current thread's runtime: a timerfd and the task driving it, spinning
/// the last `spin` before each deadline. Must be called within a tokio runtime.
fn start(spin: Duration) -> io::Result<Arc<Shared>> {
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    lower_timer_slack();
    let shared = Arc::new(Shared {
        timerfd: TimerFd::new()?,
        queue: Mutex::new(Queue {
            heap: BinaryHeap::with_capacity(1024),
            armed_ns: u64::MAX,
        }),
        spin_ns: spin.as_nanos() as u64,
        alive: AtomicBool::new(true),
    });
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

/// Starts this thread's timer now, spinning the last `spin` before each deadline (`--spin`), so
/// a worker that runs out of descriptors later still has one. Call on each worker's runtime
/// before serving. Idempotent.
pub fn install(spin: Duration) -> io::Result<()> {
    LOCAL.with(|local| {
        if local
            .borrow()
            .as_ref()
            .is_none_or(|t| !t.alive.load(Relaxed))
        {
            let timer = start(spin)?;
            *local.borrow_mut() = Some(timer);
        }
        Ok(())
    })
}

/// Runs `f` on this thread's timer with its queue locked, starting a timer that never spins if
/// the thread has none.
fn with_queue<R>(f: impl FnOnce(&Shared, &mut Queue) -> R) -> io::Result<R> {
    install(Duration::ZERO)?;
    LOCAL.with(|local| {
        let local = local.borrow();
        // Invariant: `install` just put a live timer there.
        let timer = local.as_ref().expect("this thread has a timer");
        let mut queue = timer.queue();
        let result = f(timer, &mut queue);
        drop(queue);
        Ok(result)
    })
}

/// One waiter's registration with the timer: the deadline it asked for and the waker given.
#[derive(Debug, Default)]
pub struct Alarm {
    set: Option<(u64, Waker)>,
}

impl Alarm {
    /// `Ready(now_ns)` once `CLOCK_MONOTONIC` has reached `due_ns`; otherwise makes sure the
    /// task is woken at `due_ns` and returns `Pending`. Never ready early.
    pub fn poll_at(&mut self, due_ns: u64, cx: &mut Context<'_>) -> Poll<u64> {
        let now = monotonic_ns();
        let due = now >= due_ns;
        let registered = self
            .set
            .as_ref()
            .is_some_and(|(at, waker)| *at == due_ns && waker.will_wake(cx.waker()));
        // One visit to the queue: a busy runtime looks at the kernel timer's descriptor only
        // every few dozen task polls, so whoever else is due is woken here too, without waiting
        // for that; and this waiter is queued if it has to wait.
        let queued = with_queue(|timer, queue| {
            Shared::wake_due(queue, now);
            if due || registered {
                Ok(())
            } else {
                timer.add(queue, due_ns, cx.waker().clone())
            }
        });
        if due {
            self.set = None;
            return Poll::Ready(now);
        }
        if !registered {
            if !matches!(queued, Ok(Ok(()))) {
                // No kernel timer could be had (out of descriptors): poll again soon rather
                // than answer early or never.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.set = Some((due_ns, cx.waker().clone()));
        }
        Poll::Pending
    }
}

/// A future that completes once `CLOCK_MONOTONIC` reaches `due_ns`, with the time it read then.
pub fn sleep_until(due_ns: u64) -> Sleep {
    Sleep {
        due_ns,
        alarm: Alarm::default(),
    }
}

/// See [`sleep_until`].
#[derive(Debug)]
pub struct Sleep {
    due_ns: u64,
    alarm: Alarm,
}

impl Future for Sleep {
    type Output = u64;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        let this = self.get_mut();
        this.alarm.poll_at(this.due_ns, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn never_early_and_far_finer_than_a_millisecond_tick() {
        runtime().block_on(async {
            install(Duration::ZERO).unwrap();
            let mut late_us = Vec::new();
            for i in 0..200u64 {
                // Deadlines that are not whole milliseconds, as a 1 ms tick would round.
                let due = monotonic_ns() + 300_000 + (i % 7) * 37_000;
                let now = sleep_until(due).await;
                assert!(now >= due, "woke {} ns early", due - now);
                late_us.push((now - due) / 1000);
            }
            late_us.sort_unstable();
            // A 1 ms tick would make the median ~500 µs or more; a loaded 2-core machine still
            // wakes a timerfd within ~100 µs at the median.
            assert!(late_us[100] < 250, "median lateness {} µs", late_us[100]);
        });
    }

    #[test]
    fn wakes_many_waiters_in_deadline_order_each_at_its_own_time() {
        runtime().block_on(async {
            let base = monotonic_ns() + 2_000_000;
            // Queued in reverse, so only the heap puts them in order.
            let tasks: Vec<_> = (0..100u64)
                .rev()
                .map(|i| {
                    let due = base + i * 50_000;
                    tokio::spawn(async move { (due, sleep_until(due).await) })
                })
                .collect();
            for task in tasks {
                let (due, woke) = task.await.unwrap();
                assert!(woke >= due, "woke {} ns early", due - woke);
                assert!(
                    woke - due < 50_000_000,
                    "woke {} ms late",
                    (woke - due) / 1_000_000
                );
            }
        });
    }

    #[test]
    fn a_dropped_waiter_is_harmless_and_a_new_runtime_gets_a_new_timer() {
        for _ in 0..2 {
            runtime().block_on(async {
                let soon = monotonic_ns() + 1_000_000;
                // Registered, then dropped before its deadline.
                let abandoned = tokio::time::timeout(
                    std::time::Duration::from_micros(100),
                    sleep_until(soon + 50_000_000),
                )
                .await;
                assert!(abandoned.is_err());
                let now =
                    tokio::time::timeout(std::time::Duration::from_secs(5), sleep_until(soon))
                        .await
                        .expect("this runtime's timer wakes its waiters");
                assert!(now >= soon);
            });
        }
    }

    #[test]
    fn a_spinning_timer_is_never_early_and_wakes_every_waiter() {
        runtime().block_on(async {
            install(Duration::from_micros(200)).unwrap();
            let base = monotonic_ns() + 1_000_000;
            // Deadlines closer together than the spin window, and some far apart.
            let tasks: Vec<_> = (0..50u64)
                .map(|i| {
                    let due = base + i * 30_000 + (i / 10) * 2_000_000;
                    tokio::spawn(async move { (due, sleep_until(due).await) })
                })
                .collect();
            let mut late_us = Vec::new();
            for task in tasks {
                let (due, woke) = task.await.unwrap();
                assert!(woke >= due, "woke {} ns early", due - woke);
                late_us.push((woke - due) / 1000);
            }
            late_us.sort_unstable();
            assert!(late_us[25] < 250, "median lateness {} µs", late_us[25]);
        });
    }

    #[test]
    fn a_past_deadline_is_ready_at_once() {
        runtime().block_on(async {
            let due = monotonic_ns();
            assert!(sleep_until(due).await >= due);
        });
    }
}
