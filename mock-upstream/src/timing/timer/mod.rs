//! The precise timer behind every delayed answer and stream event.
//!
//! tokio's timer ticks every millisecond and rounds each deadline up to its next tick: a 3 ms
//! latency left after ~4.1 ms and stream events ~1.4 ms late. Here each worker runtime owns one
//! kernel timer instead: a `timerfd` on `CLOCK_MONOTONIC`, armed at the earliest absolute deadline
//! of a queue (a binary heap of deadlines and wakers) and driven by one task through tokio's
//! `AsyncFd`. At each expiry that task wakes every waiter whose deadline has passed, all in that
//! one wake-up, and re-arms at the next deadline.
//!
//! The kernel wakes it late (tens of microseconds on a VM), so the timer fires a margin before
//! the earliest deadline and the task then yields in a loop (the worker's other tasks and I/O
//! still run) until each deadline within that spin window has passed, for a lateness of a
//! microsecond or two. By default (`--spin auto`) the margin is learned
//! ([`gatebench_shared::wake`]): calibrated on the timerfd when the timer is installed, then fed
//! the lateness of every kernel wake-up; `--spin DURATION` fixes it, and `--spin 0` never spins
//! (an event is then late by the kernel's wake-up). Either way nothing spins outside the window
//! before a deadline: an idle worker, or one whose deadlines are all far off, sleeps in
//! `epoll_wait` until the kernel fires. A waiter costs a heap push (no allocation once the heap
//! has grown), so 10,000 open streams cost 10,000 entries of 32 bytes.
//!
//! Deadlines are nanoseconds of [`gatebench_shared::clock::monotonic_ns`], the clock the timer is
//! armed on, so no second clock can drift against it. tokio's timer stays for the coarse limits
//! (header, body and send timeouts, shutdown grace) where a millisecond does not matter.
//!
//! A waiter dropped before its deadline (a client gone mid-stream) leaves its entry in the queue
//! until the deadline passes; waking a finished task does nothing.
//!
//! - `driver`: one worker's queue, margin and kernel timer, and the task that drives them.
//! - `account`: the workers' timers as one report, for `/metrics` and the shutdown summary.

mod account;
mod driver;

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::wake::Spin;

pub use account::{summary, Timers};
use driver::{start, Shared};

thread_local! {
    /// This thread's timer, started by the first waiter (or by [`install`]).
    static LOCAL: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Starts this thread's timer now, spinning before each deadline as `spin` says (`--spin`;
/// `auto` calibrates first, blocking the thread for a few tens of milliseconds), so a worker
/// that runs out of descriptors later still has one, and registers it with `timers` (the
/// server's account). Call on each worker's runtime before serving. Idempotent.
pub fn install(spin: Spin, timers: Option<&Timers>) -> io::Result<()> {
    LOCAL.with(|local| {
        if local
            .borrow()
            .as_ref()
            .is_none_or(|t| !t.alive.load(Relaxed))
        {
            let timer = start(spin)?;
            if let Some(timers) = timers {
                timers.register(timer.clone());
            }
            *local.borrow_mut() = Some(timer);
        }
        Ok(())
    })
}

/// Starts this thread's timer on simulated `time` (for tests): waiters then sleep on it.
#[cfg(test)]
fn install_simulated(time: &Arc<gatebench_shared::sim::SimTime>, spin: Spin) {
    let timer = driver::start_simulated(time, spin);
    LOCAL.with(|local| *local.borrow_mut() = Some(timer));
}

/// Runs `f` on this thread's timer with its queue locked, starting a timer that never spins if
/// the thread has none.
fn with_queue<R>(f: impl FnOnce(&Shared, &mut driver::Queue) -> R) -> io::Result<R> {
    install(Spin::Fixed(std::time::Duration::ZERO), None)?;
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
        let registered = self
            .set
            .as_ref()
            .is_some_and(|(at, waker)| *at == due_ns && waker.will_wake(cx.waker()));
        // One visit to the queue: a busy runtime looks at the kernel timer's descriptor only
        // every few dozen task polls, so whoever else is due is woken here too, without waiting
        // for that; and this waiter is queued if it has to wait.
        let visit = with_queue(|timer, queue| {
            let now = timer.now();
            queue.wake_due(now);
            let due = now >= due_ns;
            let queued = if due || registered {
                Ok(())
            } else {
                timer.add(queue, now, due_ns, cx.waker().clone())
            };
            (now, due, queued)
        });
        let (now, due, queued) = match visit {
            Ok((now, due, queued)) => (now, due, Ok(queued)),
            // No timer at all: the kernel's clock, and a retry below.
            Err(err) => {
                let now = monotonic_ns();
                (now, now >= due_ns, Err(err))
            }
        };
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
    use gatebench_shared::wake::{MAX_MARGIN_NS, MIN_MARGIN_NS};
    use std::future::Future;
    use std::time::Duration;

    /// Whether this run judges the machine's precision too (`GATEBENCH_PRECISION=1`, set by
    /// `scripts/precision.sh`): how late this host wakes is its own, so the gate asserts only
    /// that no waiter is early and every waiter wakes.
    fn precision_run() -> bool {
        std::env::var_os("GATEBENCH_PRECISION").is_some_and(|v| v != "0")
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn never_early_and_far_finer_than_a_millisecond_tick() {
        runtime().block_on(async {
            install(Spin::Fixed(Duration::ZERO), None).unwrap();
            let mut late_us = Vec::new();
            for i in 0..200u64 {
                // Deadlines that are not whole milliseconds, as a 1 ms tick would round.
                let due = monotonic_ns() + 300_000 + (i % 7) * 37_000;
                let now = sleep_until(due).await;
                assert!(now >= due, "woke {} ns early", due - now);
                late_us.push((now - due) / 1000);
            }
            late_us.sort_unstable();
            // A 1 ms tick would make the median ~500 µs or more; a quiet 2-core machine wakes a
            // timerfd within ~100 µs at the median.
            if precision_run() {
                assert!(late_us[100] < 250, "median lateness {} µs", late_us[100]);
            }
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
                // Polled once (so registered), then dropped before its deadline, a minute off.
                let mut abandoned = Box::pin(sleep_until(soon + 60_000_000_000));
                let first = std::future::poll_fn(|cx| {
                    std::task::Poll::Ready(abandoned.as_mut().poll(cx).is_pending())
                })
                .await;
                assert!(first, "a deadline a minute off is pending");
                drop(abandoned);
                let now =
                    tokio::time::timeout(std::time::Duration::from_secs(5), sleep_until(soon))
                        .await
                        .expect("this runtime's timer wakes its waiters");
                assert!(now >= soon);
            });
        }
    }

    /// Fifty waiters on simulated time, grouped as [`fifty_waiters`]'s: each one's lateness,
    /// ns, in the order they were due; asserts none woke early.
    async fn fifty_simulated(time: &Arc<gatebench_shared::sim::SimTime>) -> Vec<u64> {
        let base = time.now_ns() + 1_000_000;
        let tasks: Vec<_> = (0..50u64)
            .map(|i| {
                let due = base + i * 30_000 + (i / 10) * 2_000_000;
                tokio::spawn(async move { (due, sleep_until(due).await) })
            })
            .collect();
        let mut late = Vec::new();
        for task in tasks {
            let (due, woke) = task.await.unwrap();
            assert!(woke >= due, "woke {} ns early", due - woke);
            late.push(woke - due);
        }
        late
    }

    /// Simulated time whose kernel wake-ups are late by a seeded 20-300 µs.
    fn late_time() -> Arc<gatebench_shared::sim::SimTime> {
        let time = gatebench_shared::sim::SimTime::new(1_000_000_000);
        let mut seed = 0x2545_f491_u64;
        time.set_lateness(Box::new(move |_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            20_000 + seed % 280_000
        }));
        time
    }

    #[tokio::test(start_paused = true)]
    async fn on_simulated_time_a_timer_spinning_past_the_lateness_wakes_every_waiter_on_time() {
        // Kernel wake-ups up to 300 µs late, a 400 µs spin: every waiter is woken at its
        // deadline, to within one turn of the spin (1 µs).
        let time = late_time();
        install_simulated(&time, Spin::Fixed(Duration::from_micros(400)));
        let late = time.run(fifty_simulated(&time)).await;
        assert_eq!(late.len(), 50);
        assert!(late.iter().all(|&ns| ns <= 1_000), "{late:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn on_simulated_time_a_timer_without_a_spin_is_as_late_as_the_kernel_and_never_early() {
        let time = late_time();
        install_simulated(&time, Spin::Fixed(Duration::ZERO));
        let late = time.run(fifty_simulated(&time)).await;
        assert_eq!(late.len(), 50);
        // Late by the model's wake-up (20-300 µs), and for those behind in a group, by less.
        assert!(late.iter().all(|&ns| ns <= 300_000), "{late:?}");
        assert!(late[0] >= 20_000, "{late:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn on_simulated_time_an_auto_timer_learns_its_margin_from_late_wakeups() {
        // The margin starts at 50 µs; the late wake-ups of the first rounds widen it, and the
        // last round is then on time.
        let time = late_time();
        install_simulated(&time, Spin::Auto);
        let mut rounds = Vec::new();
        for _ in 0..20 {
            rounds.push(time.run(fifty_simulated(&time)).await);
        }
        assert!(rounds[0].iter().any(|&ns| ns > 1_000), "{:?}", rounds[0]);
        let last = rounds.last().unwrap();
        assert!(last.iter().all(|&ns| ns <= 1_000), "{last:?}");
    }

    /// Fifty waiters, their deadlines closer together than a spin window in groups of ten, the
    /// groups 2 ms apart: asserts none woke early and returns each one's lateness in µs, sorted.
    async fn fifty_waiters() -> Vec<u64> {
        let base = monotonic_ns() + 1_000_000;
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
        late_us
    }

    #[test]
    fn a_spinning_timer_is_never_early_and_wakes_every_waiter() {
        runtime().block_on(async {
            install(Spin::Fixed(Duration::from_micros(200)), None).unwrap();
            let median = fifty_waiters().await[25];
            if precision_run() {
                assert!(median < 250, "median lateness {median} µs");
            }
        });
    }

    #[test]
    fn an_auto_timer_is_calibrated_never_early_and_learns_only_from_kernel_wakeups() {
        let timers = Timers::default();
        runtime().block_on(async {
            install(Spin::Auto, Some(&timers)).unwrap();
            let calibrated = timers.report().unwrap();
            assert_eq!(calibrated.spin, "auto");
            assert!(calibrated.wakeups >= 40, "{calibrated:?}");
            // Learned, so within the margins there are, whatever this host's wake-ups were.
            let (min, max) = (MIN_MARGIN_NS as f64 / 1e3, MAX_MARGIN_NS as f64 / 1e3);
            assert!(
                calibrated.margin_us >= min && calibrated.margin_us <= max,
                "{calibrated:?}"
            );
            let median = fifty_waiters().await[25];
            let r = timers.report().unwrap();
            assert!(r.widest_margin_us >= r.margin_us, "{r:?}");
            // Five groups a round: a kernel wake-up for each, or a few more, never one per
            // spin turn (thousands).
            let wakeups = r.wakeups - calibrated.wakeups;
            assert!(wakeups <= 300, "{wakeups} wake-ups: {r:?}");
            if precision_run() {
                assert!(calibrated.margin_us <= 1_000.0, "{calibrated:?}");
                assert!(median < 250, "median lateness {median} µs");
                assert!(wakeups >= 1, "{r:?}");
                // Spun within each group's window only: about 2 ms in all, far from the run.
                assert!(r.spun_s > 0.0 && r.spun_s < 0.5, "{r:?}");
            }
        });
    }

    #[test]
    fn spin_zero_never_spins_and_counts_each_wakeup() {
        let timers = Timers::default();
        runtime().block_on(async {
            install(Spin::Fixed(Duration::ZERO), Some(&timers)).unwrap();
            for _ in 0..10 {
                // Far enough ahead that no stalled thread finds it already past.
                let due = monotonic_ns() + 20_000_000;
                assert!(sleep_until(due).await >= due);
            }
        });
        let r = timers.report().unwrap();
        assert_eq!(r.spin, "0us");
        assert!((10..=12).contains(&r.wakeups), "{r:?}");
        assert_eq!(r.late_wakeups, r.wakeups, "{r:?}");
        assert_eq!(r.spun_s, 0.0, "{r:?}");
        assert_eq!(r.margin_us, 0.0, "{r:?}");
    }

    #[test]
    fn a_deadline_nearer_than_the_margin_is_spun_not_learned_from() {
        let timers = Timers::default();
        runtime().block_on(async {
            install(Spin::Fixed(Duration::from_micros(500)), Some(&timers)).unwrap();
            for _ in 0..10 {
                // Nearer than the margin: spun to, never slept for.
                let due = monotonic_ns() + 100_000;
                assert!(sleep_until(due).await >= due);
            }
        });
        let r = timers.report().unwrap();
        assert_eq!(r.wakeups, 0, "{r:?}");
        // Ten spins of up to 100 µs each (less the time the at-once expiry took); a thread the
        // host held past its deadlines spins less, which is the host's doing.
        if precision_run() {
            assert!(r.spun_s > 0.000_2 && r.spun_s < 0.05, "{r:?}");
        }
    }

    #[test]
    fn a_past_deadline_is_ready_at_once() {
        runtime().block_on(async {
            let due = monotonic_ns();
            assert!(sleep_until(due).await >= due);
        });
    }
}
