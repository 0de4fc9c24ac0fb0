//! Waiting for an intended send time precisely, without burning a core.
//!
//! tokio's timer ticks every millisecond, far too coarse for 200 µs gaps at 5,000 req/s. The pacer
//! parks on a `timerfd` armed with an absolute `CLOCK_MONOTONIC` deadline (timer slack lowered to
//! 1 ns, so the kernel fires it on time), driven by tokio's `AsyncFd` so the worker's I/O keeps
//! running meanwhile, and wakes a margin early; it then yields to the runtime in a loop for the
//! rest, reading the clock until the deadline has passed. The margin is a [`WakeMargin`]: with
//! `--spin auto` learned from how late this thread's timer fires (a short calibration before the
//! start line, then every wake-up of the run), with `--spin DURATION` fixed; either way every
//! wake-up's lateness and the time spun are counted for the result.
//!
//! One clock, `CLOCK_MONOTONIC`, both arms the timer and reads the time. `quanta`'s calibrated
//! TSC clock drifted from it by 1.73 µs per second in one process here (a calibration error that
//! differs per start): deadlines computed on one and armed on the other fired ever earlier, so a
//! worker spun ever longer and a long run measured more than a short one. The vDSO read costs
//! tens of nanoseconds, nothing beside the microseconds it measures; and the mock stamps its
//! answers on the same clock.

use std::cell::RefCell;
use std::io;

use gatebench_shared::timerfd::{lower_timer_slack, TimerFd};
use gatebench_shared::wake::{calibrate, calibration_sleeps, Spin, WakeMargin};

use crate::generator::alarm::Alarm;
use crate::wire::clock::RunClock;

/// A margin chosen as `spin` says, measured against this thread's timer (its slack lowered)
/// with a few dozen blocking sleeps, about 30 ms: call it before the run starts, so the first
/// deadlines are met with the margin the machine needs.
pub fn calibrated(spin: Spin) -> io::Result<WakeMargin> {
    lower_timer_slack();
    let mut margin = WakeMargin::new(spin);
    calibrate(&TimerFd::new()?, &mut margin, &calibration_sleeps())?;
    Ok(margin)
}

/// One worker's precise waiter.
#[derive(Debug)]
pub struct Pacer {
    clock: RunClock,
    alarm: Alarm,
    /// How long before a deadline the timerfd fires (the rest is spun, yielding to other
    /// tasks), and what the wake-ups were like.
    margin: RefCell<WakeMargin>,
}

impl Pacer {
    /// A pacer on the current thread (lowers this thread's timer slack) waking `margin` early.
    /// Needs a tokio runtime.
    pub fn new(clock: RunClock, margin: WakeMargin) -> io::Result<Pacer> {
        lower_timer_slack();
        let alarm = Alarm::for_clock(&clock)?;
        Ok(Pacer {
            clock,
            alarm,
            margin: RefCell::new(margin),
        })
    }

    /// The run clock.
    #[cfg(test)]
    pub fn clock(&self) -> &RunClock {
        &self.clock
    }

    /// The margin and what it has seen.
    pub fn into_margin(self) -> WakeMargin {
        self.margin.into_inner()
    }

    /// Returns once the run clock has reached `deadline_ns` (at once if it has).
    pub async fn wait_until(&self, deadline_ns: u64) -> io::Result<()> {
        let mut spin_from = None;
        loop {
            let now = self.clock.now_ns();
            // Before the run's zero every reading is 0: wait for the zero itself first, or
            // the first slot (due at 0) would leave before the run started. Only a reading
            // of 0 asks how far the zero is, so a wait after the start reads the clock once.
            let before_start = if now == 0 {
                self.clock.until_start_ns()
            } else {
                0
            };
            if before_start > 0 {
                let margin = self.margin.borrow().margin_ns();
                if before_start > margin {
                    let at = self.clock.start_mono_ns - margin;
                    let late = self.alarm.sleep_until_mono(at).await?;
                    self.margin.borrow_mut().observe(late);
                } else {
                    self.alarm.spin_turn().await;
                }
                continue;
            }
            if now >= deadline_ns {
                if let Some(from) = spin_from {
                    let mut margin = self.margin.borrow_mut();
                    margin.spun(now - from);
                    margin.spin_ended(now - deadline_ns);
                }
                return Ok(());
            }
            let margin = self.margin.borrow().margin_ns();
            if deadline_ns - now > margin {
                self.sleep_until(deadline_ns - margin).await?;
            } else {
                spin_from.get_or_insert(now);
                // Let the worker's responses be read while we spin.
                self.alarm.spin_turn().await;
            }
        }
    }

    /// Sleeps on the timerfd until `offset_ns` of the run clock, and counts how late it woke.
    async fn sleep_until(&self, offset_ns: u64) -> io::Result<()> {
        let late = self.alarm.sleep_until(&self.clock, offset_ns).await?;
        self.margin.borrow_mut().observe(late);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatebench_shared::sim::SimTime;
    use gatebench_shared::wake::{MAX_MARGIN_NS, MIN_MARGIN_NS};
    use std::sync::Arc;
    use std::time::Duration;

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

    /// Waits for `n` deadlines `gap_us` apart from 1 ms on, asserting none is early; the
    /// lateness of each, sorted.
    async fn paced(pacer: &Pacer, n: u64, gap_us: u64) -> Vec<u64> {
        let base = pacer.clock().now_ns() + 1_000_000;
        let mut late = Vec::new();
        for i in 0..n {
            let due = base + i * gap_us * 1_000;
            pacer.wait_until(due).await.unwrap();
            let now = pacer.clock().now_ns();
            assert!(now >= due, "woke {} ns early", due - now);
            late.push(now - due);
        }
        late.sort_unstable();
        late
    }

    /// Whether this run judges the machine's precision too (`GATEBENCH_PRECISION=1`, set by
    /// `scripts/precision.sh`): how late this host wakes is its own, so the gate asserts only
    /// that no wait ends early.
    fn precision_run() -> bool {
        std::env::var_os("GATEBENCH_PRECISION").is_some_and(|v| v != "0")
    }

    #[tokio::test]
    async fn the_first_slot_waits_for_the_start_of_the_run() {
        let clock = RunClock::starting_in(Duration::from_millis(20));
        let margin = WakeMargin::new(Spin::Fixed(Duration::from_micros(50)));
        let pacer = Pacer::new(clock.clone(), margin).unwrap();
        pacer.wait_until(0).await.unwrap();
        assert_eq!(clock.until_start_ns(), 0, "woke before the run's zero");
    }

    #[tokio::test]
    async fn waits_are_never_early_and_rarely_late() {
        let clock = RunClock::starting_in(Duration::from_millis(5));
        let margin = WakeMargin::new(Spin::Fixed(Duration::from_micros(50)));
        let pacer = Pacer::new(clock, margin).unwrap();
        let median = paced(&pacer, 200, 200).await[100];
        if precision_run() {
            assert!(median < 200_000, "median lateness {median} ns");
        }
        let r = pacer.into_margin().report();
        assert_eq!(r.spin, "50us");
        assert!((r.margin_us - 50.0).abs() < 1e-9, "{r:?}");
    }

    #[tokio::test]
    async fn an_auto_pacer_is_never_early_and_accounts_for_its_wakeups() {
        let margin = calibrated(Spin::Auto).unwrap();
        let clock = RunClock::starting_in(Duration::from_millis(5));
        let pacer = Pacer::new(clock, margin).unwrap();
        let median = paced(&pacer, 200, 200).await[100];
        let r = pacer.into_margin().report();
        assert_eq!(r.spin, "auto");
        // The calibration's 40 sleeps at least (and, but for a host that held the thread past
        // every deadline, some of the waits').
        assert!(r.wakeups >= 40, "{r:?}");
        assert!(r.lateness_p50_us <= r.lateness_p99_us, "{r:?}");
        assert!(r.lateness_p99_us <= r.lateness_max_us + 2.0, "{r:?}");
        let (min, max) = (MIN_MARGIN_NS as f64 / 1e3, MAX_MARGIN_NS as f64 / 1e3);
        assert!(r.margin_us >= min && r.margin_us <= max, "{r:?}");
        assert!(r.widest_margin_us >= r.margin_us, "{r:?}");
        if precision_run() {
            assert!(median < 200_000, "median lateness {median} ns");
            assert!(r.wakeups > 40, "{r:?}");
            // Every wait ends spinning (the margin is at least 6 µs), 200 to 600 of them.
            assert!(r.spun_s > 0.0 && r.spun_s < 1.0, "{r:?}");
        }
    }

    /// A pacer on simulated time whose run starts `lead` after its now, its kernel wake-ups
    /// as late as `lateness` says; run its waits inside `time.run`.
    fn simulated(
        lead: Duration,
        lateness: gatebench_shared::sim::Lateness,
    ) -> (Pacer, Arc<SimTime>) {
        let time = SimTime::new(1_000_000_000);
        time.set_lateness(lateness);
        let clock = RunClock::simulated(&time, lead);
        (
            Pacer::new(clock, WakeMargin::new(Spin::Auto)).unwrap(),
            time,
        )
    }

    #[tokio::test(start_paused = true)]
    async fn slot_zero_leaves_at_the_runs_zero_not_before() {
        // The run starts 10 ms on; slot 0 is due at its zero (a pacer that took "0 before the
        // start" for "due" sent it 10 ms early, and recorded it on time).
        let (pacer, time) = simulated(Duration::from_millis(10), Box::new(|_| 0));
        let start = time.now_ns() + 10_000_000;
        time.run(async {
            pacer.wait_until(0).await.unwrap();
            assert_eq!(time.now_ns(), start, "slot 0 left at the run's zero");
            pacer.wait_until(200_000).await.unwrap();
            assert_eq!(time.now_ns(), start + 200_000);
        })
        .await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_auto_pacer_made_late_widens_its_margin_and_is_then_on_time() {
        // Every kernel wake-up comes 300 µs late, past the 50 µs it starts with.
        let (pacer, time) = simulated(Duration::from_millis(5), Box::new(|_| 300_000));
        let late = time.run(paced(&pacer, 100, 1_000)).await;
        let r = pacer.into_margin().report();
        // The first wake-up (before the run's zero) was late, and widened the margin past it
        // at once: every wait of the run then woke early enough to spin to its deadline.
        assert_eq!(r.late_wakeups, 1, "{r:?}");
        assert!(r.widest_margin_us >= 304.0 && r.margin_us >= 304.0, "{r:?}");
        assert!(late.iter().all(|&ns| ns == 0), "{late:?}");
        assert_eq!(
            r.wakeups, 101,
            "one kernel wake-up a wait, and one before the start"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_schedule_at_200_and_at_5000_a_second_is_sent_at_its_instants() {
        for gap_us in [5_000, 200] {
            // Wake-ups late by a seeded 5-45 µs, within the margin the pacer starts with.
            let mut seed = 0x9e37_79b9_u64;
            let lateness = Box::new(move |_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                5_000 + seed % 40_000
            });
            let (pacer, time) = simulated(Duration::from_millis(5), lateness);
            let late = time.run(paced(&pacer, 1_000, gap_us)).await;
            // On time to within one turn of the spin, the simulation's grain.
            let turn = crate::generator::alarm::SIM_SPIN_TURN_NS;
            assert!(
                late.iter().all(|&ns| ns < turn),
                "{gap_us} µs apart: {late:?}"
            );
            let r = pacer.into_margin().report();
            assert_eq!(r.late_wakeups, 0, "{r:?}");
        }
    }
}
