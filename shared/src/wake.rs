//! How early to wake before a deadline: a margin learned from the thread's own wake-ups.
//!
//! The kernel wakes a sleeping thread late: on the small VMs this project runs on, a timerfd armed
//! 1 ms ahead fired p50 50 µs and p99 113 µs late, more after long sleeps, less on bare metal. A
//! waiter that arms its timer a margin before the deadline and spins the rest is on time whenever
//! its wake-up is less late than the margin; a fixed margin is either too small for the machine
//! (late sends, late answers) or too large (CPU spun for nothing). [`Spin::Auto`] learns it: a
//! [`WakeMargin`] is fed the lateness of every wake-up (and, at start, of a short
//! [`calibrate`] run of sleeps), and its margin is a high quantile of what it has seen lately
//! plus a pad, widened at once by a wake-up later than the margin and narrowed again when late ones
//! stay rare (under 1%) or age out. [`Spin::Fixed`] keeps a margin as given (0: never spin).
//!
//! A wake-up later than the widest margin is a thread that was not running at all (preempted, or
//! its virtual CPU descheduled): no spinning covers it, so it is counted, never learned from.
//!
//! Lateness is counted in 2 µs buckets up to 2 ms (later ones in the last bucket), twice: a window
//! that halves itself as it fills, from which the margin is taken, and a tally of the whole run,
//! from which the report is drawn. Feeding a wake-up costs an add and a compare; the margin is
//! recomputed every [`RECOMPUTE_EVERY`] wake-ups.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::clock::monotonic_ns;
use crate::timerfd::TimerFd;

/// Width of one lateness bucket.
const BUCKET_NS: u64 = 2_000;
/// Buckets: up to 2,048 µs, later wake-ups in the last.
const BUCKETS: usize = 1_024;
/// The quantile of recent lateness the margin covers.
pub const QUANTILE: f64 = 0.99;
/// Added to the quantile: the margin must exceed the lateness, not equal it.
pub const PAD_NS: u64 = 4_000;
/// The narrowest learned margin.
pub const MIN_MARGIN_NS: u64 = 6_000;
/// The widest learned margin: past this, a machine is too late for spinning to save a send.
pub const MAX_MARGIN_NS: u64 = BUCKETS as u64 * BUCKET_NS;
/// The learned margin before anything was seen.
pub const START_MARGIN_NS: u64 = 50_000;
/// The window halves once it holds this many wake-ups, so old ones fade.
const WINDOW: u64 = 2_048;
/// How often the margin is recomputed, in wake-ups.
pub const RECOMPUTE_EVERY: u32 = 16;
/// Waits in a row spun whole (the margin longer than the wait, so nothing slept and nothing was
/// learned) after which the window forgets its latest wake-up and the margin is recomputed from
/// what is left: a margin widened by one rare late wake-up past the gaps between deadlines would
/// otherwise never see another wake-up and spin for the rest of the run. Many late wake-ups take
/// as many rounds to forget, so a machine that is often late keeps its margin.
pub const BLIND_WAITS: u32 = 64;
/// A spin that ends later than this past its deadline lost the CPU while it spun (preempted by
/// another thread, or its runtime busy elsewhere).
pub const OVERSHOOT_NS: u64 = 20_000;
/// Spins per verdict on whether spinning pays: when more than a quarter of a block's spins
/// overshot, the thread is contended, and its margin is held at [`START_MARGIN_NS`] for the
/// next block (a spinning thread on a busy core is the one the kernel preempts, so a wide
/// margin there only makes the deadline later); a block with fewer lets it learn again.
pub const SPIN_BLOCK: u32 = 64;

/// How a waiter chooses its margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spin {
    /// Learned from the wake-ups seen (`--spin auto`).
    Auto,
    /// As given (`--spin DURATION`; 0: never spin).
    Fixed(Duration),
}

impl Spin {
    /// `auto` or a duration (`50us`, `1ms`, `0`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Spin> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("auto") {
            return Some(Spin::Auto);
        }
        if text == "0" {
            return Some(Spin::Fixed(Duration::ZERO));
        }
        humantime::parse_duration(text).ok().map(Spin::Fixed)
    }

    /// The flag's text: `auto`, or the margin in whole microseconds (`50us`).
    pub fn describe(&self) -> String {
        match self {
            Spin::Auto => "auto".to_string(),
            Spin::Fixed(d) => format!("{}us", d.as_micros()),
        }
    }
}

/// Counts of lateness in [`BUCKET_NS`] buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    max_ns: u64,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            counts: Box::new([0; BUCKETS]),
            total: 0,
            max_ns: 0,
        }
    }
}

impl Tally {
    fn add(&mut self, lateness_ns: u64) {
        let bucket = ((lateness_ns / BUCKET_NS) as usize).min(BUCKETS - 1);
        self.counts[bucket] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(lateness_ns);
    }

    /// Adds another tally's counts (another worker's).
    pub fn merge(&mut self, other: &Tally) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.total += other.total;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Wake-ups counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The upper edge of the bucket holding quantile `q` (0 when empty).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        self.quantile_at(q, self.total)
    }

    /// [`Tally::quantile_ns`], never the latest wake-up alone: of fewer than 100 (where a high
    /// quantile is the maximum), the one before it, so one wake-up is a one-off until another
    /// as late comes.
    fn quantile_but_one_ns(&self, q: f64) -> u64 {
        self.quantile_at(q, self.total.saturating_sub(1).max(1))
    }

    fn quantile_at(&self, q: f64, most: u64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((self.total as f64 * q).ceil() as u64).clamp(1, most.min(self.total));
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let edge = (i as u64 + 1) * BUCKET_NS;
                return edge.min(self.max_ns.max(i as u64 * BUCKET_NS));
            }
        }
        self.max_ns
    }

    /// Forgets one wake-up of the latest bucket.
    fn forget_latest(&mut self) {
        if let Some(n) = self.counts.iter_mut().rev().find(|n| **n > 0) {
            *n -= 1;
            self.total -= 1;
        }
    }

    /// Halves every count, so what was seen long ago weighs less and, at last, nothing.
    fn halve(&mut self) {
        let mut total = 0;
        for n in self.counts.iter_mut() {
            *n /= 2;
            total += *n;
        }
        self.total = total;
    }
}

/// One waiter's margin and what it has seen.
#[derive(Debug, Clone)]
pub struct WakeMargin {
    spin: Spin,
    margin_ns: u64,
    widest_ns: u64,
    window: Tally,
    run: Tally,
    since_recompute: u32,
    /// Waits spun whole since the last wake-up.
    blind: u32,
    /// This block's spins, and those that overshot their deadline.
    block_spins: u32,
    block_overshot: u32,
    /// The last block overshot too often: the margin is held at the start margin.
    contended: bool,
    /// Spins that overshot, and blocks found contended, over the run.
    overshot: u64,
    contended_blocks: u64,
    /// Wake-ups later than the margin they were armed with.
    late: u64,
    spun_ns: u64,
}

impl WakeMargin {
    /// A margin chosen as `spin` says.
    pub fn new(spin: Spin) -> WakeMargin {
        let margin_ns = match spin {
            Spin::Auto => START_MARGIN_NS,
            Spin::Fixed(d) => d.as_nanos().min(u64::MAX as u128) as u64,
        };
        WakeMargin {
            spin,
            margin_ns,
            widest_ns: margin_ns,
            window: Tally::default(),
            run: Tally::default(),
            since_recompute: 0,
            blind: 0,
            block_spins: 0,
            block_overshot: 0,
            contended: false,
            overshot: 0,
            contended_blocks: 0,
            late: 0,
            spun_ns: 0,
        }
    }

    /// How long before a deadline to wake.
    #[inline]
    pub fn margin_ns(&self) -> u64 {
        if self.contended {
            self.margin_ns.min(START_MARGIN_NS)
        } else {
            self.margin_ns
        }
    }

    /// A wait that spun ended `overshoot_ns` past its deadline (0: on time). Counted; with
    /// `auto`, a block of [`SPIN_BLOCK`] spins of which more than a quarter overshot by over
    /// [`OVERSHOOT_NS`] holds the margin at the start margin for the next block.
    #[inline]
    pub fn spin_ended(&mut self, overshoot_ns: u64) {
        let overshot = overshoot_ns > OVERSHOOT_NS;
        self.overshot += u64::from(overshot);
        if self.spin != Spin::Auto {
            return;
        }
        self.block_spins += 1;
        self.block_overshot += u32::from(overshot);
        if self.block_spins >= SPIN_BLOCK {
            self.contended = self.block_overshot * 4 > self.block_spins;
            self.contended_blocks += u64::from(self.contended);
            self.block_spins = 0;
            self.block_overshot = 0;
        }
    }

    /// Feeds the lateness of one wake-up: how long after the instant the timer was armed for
    /// the waiter ran again.
    #[inline]
    pub fn observe(&mut self, lateness_ns: u64) {
        self.blind = 0;
        self.run.add(lateness_ns);
        let late = lateness_ns >= self.margin_ns();
        self.late += u64::from(late);
        if self.spin != Spin::Auto || lateness_ns > MAX_MARGIN_NS {
            // Later than any margin: the thread was not running (preempted, or its virtual CPU
            // descheduled), which no spinning covers; counted, not learned from, or one stall
            // would pin the margin at its widest for a thousand wake-ups.
            return;
        }
        self.window.add(lateness_ns);
        self.since_recompute += 1;
        if self.since_recompute >= RECOMPUTE_EVERY {
            self.recompute();
        }
        if late {
            // Covered at once; the next recompute decides whether it was a one-off.
            self.widen(lateness_ns + PAD_NS);
        }
    }

    /// Counts time spent spinning (for the CPU the margin cost): call it once per wait that
    /// spun. [`BLIND_WAITS`] of them in a row with no wake-up between forget the latest one.
    #[inline]
    pub fn spun(&mut self, ns: u64) {
        self.spun_ns += ns;
        self.blind += 1;
        if self.blind >= BLIND_WAITS && self.spin == Spin::Auto {
            self.blind = 0;
            self.window.forget_latest();
            self.recompute();
        }
    }

    fn recompute(&mut self) {
        self.since_recompute = 0;
        if self.window.total >= WINDOW {
            self.window.halve();
        }
        if self.window.total == 0 {
            // Faded to nothing: start again from the start margin.
            self.margin_ns = START_MARGIN_NS;
            return;
        }
        let quantile = self.window.quantile_but_one_ns(QUANTILE);
        self.margin_ns = 0;
        self.widen(quantile + PAD_NS);
    }

    fn widen(&mut self, margin_ns: u64) {
        self.margin_ns = self
            .margin_ns
            .max(margin_ns.clamp(MIN_MARGIN_NS, MAX_MARGIN_NS));
        self.widest_ns = self.widest_ns.max(self.margin_ns);
    }

    /// The lateness of every wake-up seen.
    pub fn tally(&self) -> &Tally {
        &self.run
    }

    /// What the margin was and what it saw, for a result.
    pub fn report(&self) -> WakeReport {
        let mut report = WakeReport::of(
            self.spin,
            self.margin_ns(),
            self.widest_ns,
            &self.run,
            self.late,
            self.spun_ns,
        );
        report.overshot_spins = self.overshot;
        report.contended_blocks = self.contended_blocks;
        report
    }
}

/// Share of wake-ups past the margin from which the timer is said to set a run's tail: one in
/// 200 reaches the p99.5 of what was waited for.
pub const TIMER_TAIL_SHARE: f64 = 0.005;

/// A margin's account, as results carry it (times in µs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WakeReport {
    /// `auto` or the fixed margin (`50us`).
    pub spin: String,
    /// The margin at the end (the widest of several waiters').
    pub margin_us: f64,
    /// The widest margin used.
    pub widest_margin_us: f64,
    /// Wake-ups seen, and how late they were.
    pub wakeups: u64,
    pub lateness_p50_us: f64,
    pub lateness_p99_us: f64,
    pub lateness_max_us: f64,
    /// Wake-ups later than their margin: the waits that ended late.
    pub late_wakeups: u64,
    /// Time spent spinning, in seconds of one core.
    pub spun_s: f64,
    /// Spins that ended more than [`OVERSHOOT_NS`] past their deadline (the thread lost the
    /// CPU while it spun), and blocks of [`SPIN_BLOCK`] spins in which so many did that the
    /// margin was held at the start margin.
    #[serde(default)]
    pub overshot_spins: u64,
    #[serde(default)]
    pub contended_blocks: u64,
}

impl WakeReport {
    /// The report of one waiter, or of several merged (`run`: their tallies merged).
    pub fn of(
        spin: Spin,
        margin_ns: u64,
        widest_ns: u64,
        run: &Tally,
        late: u64,
        spun_ns: u64,
    ) -> Self {
        let us = |ns: u64| ns as f64 / 1e3;
        WakeReport {
            spin: spin.describe(),
            margin_us: us(margin_ns),
            widest_margin_us: us(widest_ns),
            wakeups: run.total,
            lateness_p50_us: us(run.quantile_ns(0.5)),
            lateness_p99_us: us(run.quantile_ns(0.99)),
            lateness_max_us: us(run.max_ns),
            late_wakeups: late,
            spun_s: spun_ns as f64 / 1e9,
            overshot_spins: 0,
            contended_blocks: 0,
        }
    }

    /// Share of wake-ups that came later than their margin: about that share of the waits
    /// ended late by the timer, not by the load.
    pub fn late_share(&self) -> f64 {
        if self.wakeups == 0 {
            return 0.0;
        }
        self.late_wakeups as f64 / self.wakeups as f64
    }

    /// Whether enough wake-ups came past the margin ([`TIMER_TAIL_SHARE`] of them) that the
    /// machine's timer, not the load, set the tail of what was waited for (a pacer's schedule
    /// lag from about its p99.5 up).
    pub fn timer_set_the_tail(&self) -> bool {
        self.late_share() >= TIMER_TAIL_SHARE
    }

    /// Several waiters' margins as one: margins the widest, tallies merged, counts added.
    pub fn merged(margins: &[&WakeMargin]) -> Option<WakeReport> {
        let first = margins.first()?;
        let mut run = Tally::default();
        let (mut late, mut spun, mut margin, mut widest) = (0, 0, 0, 0);
        let (mut overshot, mut contended) = (0, 0);
        for m in margins {
            run.merge(&m.run);
            late += m.late;
            spun += m.spun_ns;
            margin = margin.max(m.margin_ns());
            widest = widest.max(m.widest_ns);
            overshot += m.overshot;
            contended += m.contended_blocks;
        }
        let mut report = WakeReport::of(first.spin, margin, widest, &run, late, spun);
        report.overshot_spins = overshot;
        report.contended_blocks = contended;
        Some(report)
    }
}

/// Sleeps on `timer` for each of `sleeps` in turn, blocking the thread, and feeds each wake-up's
/// lateness to `margin`: what the thread's timer does before any deadline depends on it. A few
/// dozen sleeps take a few tens of milliseconds.
pub fn calibrate(timer: &TimerFd, margin: &mut WakeMargin, sleeps: &[Duration]) -> io::Result<()> {
    for sleep in sleeps {
        let due = monotonic_ns() + sleep.as_nanos() as u64;
        timer.arm_at(due)?;
        loop {
            let mut fds = libc::pollfd {
                fd: timer.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd that lives for the call; a timeout of -1 waits for the timer.
            let ready = unsafe { libc::poll(&mut fds, 1, -1) };
            if ready < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            if timer.take_expiry()? {
                break;
            }
        }
        margin.observe(monotonic_ns().saturating_sub(due));
    }
    Ok(())
}

/// The sleeps a waiter calibrates with: 40 of 100 µs to 2 ms, about 30 ms in all.
pub fn calibration_sleeps() -> Vec<Duration> {
    const STEPS_US: [u64; 5] = [100, 200, 500, 1_000, 2_000];
    (0..40)
        .map(|i| Duration::from_micros(STEPS_US[i % STEPS_US.len()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(spin: Spin, lateness_us: impl IntoIterator<Item = u64>) -> WakeMargin {
        let mut m = WakeMargin::new(spin);
        for us in lateness_us {
            m.observe(us * 1_000);
        }
        m
    }

    #[test]
    fn spin_parses_auto_durations_and_zero() {
        assert_eq!(Spin::parse("auto"), Some(Spin::Auto));
        assert_eq!(Spin::parse(" AUTO "), Some(Spin::Auto));
        assert_eq!(Spin::parse("0"), Some(Spin::Fixed(Duration::ZERO)));
        assert_eq!(
            Spin::parse("50us"),
            Some(Spin::Fixed(Duration::from_micros(50)))
        );
        assert_eq!(Spin::parse("1s"), Some(Spin::Fixed(Duration::from_secs(1))));
        assert_eq!(Spin::parse("soon"), None);
        assert_eq!(Spin::parse(""), None);
        assert_eq!(Spin::Fixed(Duration::from_micros(50)).describe(), "50us");
        assert_eq!(Spin::Auto.describe(), "auto");
    }

    #[test]
    fn a_waiter_that_sees_late_wakeups_widens_its_margin() {
        // A VM's timer: most wake-ups 30-60 µs late, one in fifty 110 µs.
        let m = fed(
            Spin::Auto,
            (0..1_000).map(|i| if i % 50 == 0 { 110 } else { 30 + i % 31 }),
        );
        assert!(m.margin_ns() >= 110_000, "margin {} ns", m.margin_ns());
        assert!(m.margin_ns() <= 130_000, "margin {} ns", m.margin_ns());
    }

    #[test]
    fn a_waiter_that_sees_none_keeps_its_margin_small() {
        let m = fed(Spin::Auto, (0..1_000).map(|i| i % 4));
        assert!(m.margin_ns() <= 12_000, "margin {} ns", m.margin_ns());
        assert!(m.margin_ns() >= MIN_MARGIN_NS);
        assert_eq!(m.report().late_wakeups, 0);
    }

    #[test]
    fn one_late_wakeup_widens_at_once_and_fades_when_no_more_come() {
        let mut m = fed(Spin::Auto, (0..500).map(|_| 2));
        let small = m.margin_ns();
        m.observe(300_000);
        assert!(
            m.margin_ns() > 300_000,
            "margin {} ns after a 300 µs wake-up",
            m.margin_ns()
        );
        for _ in 0..20_000 {
            m.observe(2_000);
        }
        // Back within one bucket of where it was (the window's maximum still remembers it).
        assert!(
            m.margin_ns() <= small + BUCKET_NS,
            "{} ns: the late wake-up has aged out",
            m.margin_ns()
        );
        let r = m.report();
        assert!(r.widest_margin_us > 300.0, "{r:?}");
        assert_eq!(r.late_wakeups, 1, "{r:?}");
        assert!(r.lateness_max_us >= 300.0, "{r:?}");
    }

    #[test]
    fn one_late_calibration_sleep_is_a_one_off_two_are_not() {
        // 40 sleeps (a calibration), one 1 ms late: past the next recompute it no longer counts.
        let one = fed(Spin::Auto, (0..40).map(|i| if i == 5 { 1_000 } else { 20 }));
        assert!(one.margin_ns() <= 30_000, "{} ns", one.margin_ns());
        let two = fed(
            Spin::Auto,
            (0..40).map(|i| if i == 5 || i == 9 { 1_000 } else { 20 }),
        );
        assert!(two.margin_ns() >= 1_000_000, "{} ns", two.margin_ns());
    }

    #[test]
    fn a_margin_too_wide_to_sleep_fades_back() {
        // One wake-up 2 ms late after 39 of 20 µs: the margin covers it at once, wider than the
        // 200 µs between deadlines, so the waits only spin.
        let mut m = fed(
            Spin::Auto,
            (0..40).map(|i| if i == 39 { 2_000 } else { 20 }),
        );
        assert!(m.margin_ns() > 1_000_000, "margin {} ns", m.margin_ns());
        for _ in 0..BLIND_WAITS - 1 {
            m.spun(200_000);
        }
        assert!(m.margin_ns() > 1_000_000, "not yet: {} ns", m.margin_ns());
        m.spun(200_000);
        assert!(m.margin_ns() <= 30_000, "faded: {} ns", m.margin_ns());
        // A fixed margin never fades.
        let mut f = WakeMargin::new(Spin::Fixed(Duration::from_millis(1)));
        for _ in 0..BLIND_WAITS {
            f.spun(200_000);
        }
        assert_eq!(f.margin_ns(), 1_000_000);
        // A machine often late keeps its margin: one in ten wake-ups 300 µs late.
        let mut often = fed(
            Spin::Auto,
            (0..1_000).map(|i| if i % 10 == 0 { 300 } else { 20 }),
        );
        for _ in 0..BLIND_WAITS * 4 {
            often.spun(200_000);
        }
        assert!(often.margin_ns() >= 300_000, "{} ns", often.margin_ns());
        // Faded to nothing, a margin starts again from the start.
        let mut e = WakeMargin::new(Spin::Auto);
        e.observe(3_000);
        for _ in 0..BLIND_WAITS {
            e.spun(1_000);
        }
        assert_eq!(e.margin_ns(), START_MARGIN_NS);
    }

    #[test]
    fn a_fixed_margin_stays_as_given_and_still_counts() {
        let m = fed(Spin::Fixed(Duration::from_micros(50)), 0..100);
        assert_eq!(m.margin_ns(), 50_000);
        let r = m.report();
        assert_eq!(r.spin, "50us");
        assert_eq!(r.wakeups, 100);
        assert_eq!(r.late_wakeups, 50, "{r:?}");
    }

    #[test]
    fn spins_that_keep_losing_the_cpu_hold_the_margin_at_the_start_margin() {
        // A busy machine: wake-ups 300 µs late, so the margin widens past them.
        let mut m = fed(Spin::Auto, (0..100).map(|_| 300));
        assert!(m.margin_ns() > 300_000, "{} ns", m.margin_ns());
        // Most of a block's spins end 80 µs past their deadline: spinning does not pay.
        for i in 0..SPIN_BLOCK {
            m.spin_ended(if i % 2 == 0 { 80_000 } else { 0 });
        }
        assert_eq!(m.margin_ns(), START_MARGIN_NS);
        let r = m.report();
        assert_eq!(
            (r.overshot_spins, r.contended_blocks),
            (u64::from(SPIN_BLOCK) / 2, 1),
            "{r:?}"
        );
        // A block of spins on time lets it learn again.
        for _ in 0..SPIN_BLOCK {
            m.spin_ended(1_000);
        }
        assert!(m.margin_ns() > 300_000, "{} ns", m.margin_ns());
        // A few overshoots in a block are a busy moment, not a contended thread.
        for i in 0..SPIN_BLOCK {
            m.spin_ended(if i % 8 == 0 { 80_000 } else { 0 });
        }
        assert!(m.margin_ns() > 300_000, "{} ns", m.margin_ns());
    }

    #[test]
    fn a_stall_no_margin_covers_is_counted_not_learned() {
        let mut m = fed(Spin::Auto, (0..500).map(|_| 20));
        let before = m.margin_ns();
        m.observe(12_000_000);
        assert_eq!(m.margin_ns(), before);
        let r = m.report();
        assert_eq!((r.late_wakeups, r.wakeups), (1, 501), "{r:?}");
        assert!(r.lateness_max_us >= 12_000.0, "{r:?}");
    }

    #[test]
    fn the_margin_never_leaves_its_bounds() {
        let m = fed(Spin::Auto, (0..100).map(|_| 2_040));
        assert!(m.margin_ns() > 2_040_000, "{} ns", m.margin_ns());
        assert!(m.margin_ns() <= MAX_MARGIN_NS, "{} ns", m.margin_ns());
        let m = fed(Spin::Auto, (0..100).map(|_| 0));
        assert_eq!(m.margin_ns(), MIN_MARGIN_NS);
    }

    #[test]
    fn reports_merge_across_waiters() {
        let a = fed(Spin::Auto, (0..100).map(|_| 10));
        let b = fed(Spin::Auto, (0..100).map(|_| 90));
        let r = WakeReport::merged(&[&a, &b]).unwrap();
        assert_eq!(r.wakeups, 200);
        assert!(
            r.lateness_p50_us <= 12.0 && r.lateness_p99_us >= 90.0,
            "{r:?}"
        );
        assert!(
            (r.margin_us - b.margin_ns() as f64 / 1e3).abs() < 1e-9,
            "{r:?}"
        );
        assert!(WakeReport::merged(&[]).is_none());
    }

    #[test]
    fn calibration_measures_this_machines_timer() {
        let timer = TimerFd::new().unwrap();
        let mut m = WakeMargin::new(Spin::Auto);
        let sleeps = [Duration::from_micros(200); 10];
        let start = monotonic_ns();
        calibrate(&timer, &mut m, &sleeps).unwrap();
        assert!(
            monotonic_ns() - start >= 2_000_000,
            "ten 200 µs sleeps took less than 2 ms"
        );
        assert_eq!(m.tally().total(), 10);
        assert!(m.margin_ns() >= MIN_MARGIN_NS && m.margin_ns() <= MAX_MARGIN_NS);
        assert_eq!(calibration_sleeps().len(), 40);
    }
}
