//! Polling for answers that are due, instead of sleeping through them.
//!
//! A worker that sleeps in epoll while a request is in flight reads its answer only once the
//! kernel wakes the thread, tens of microseconds after the answer arrived on a small VM. While
//! an answer is due, the worker's poller task yields in a loop instead, so the current-thread
//! runtime polls its sockets with a zero timeout and reads the answer the moment it arrives, as
//! `overhead` does for its calls.
//!
//! "Due" comes from the worker's own recent answers: of the last [`RECENT`] successful requests,
//! the low quantile of their times from dispatch to first byte and the high quantile of their
//! times to the end of the answer (a stream's last event), and the earliest request in flight is
//! polled for from [`LEAD_NS`] before the first to [`LEAD_NS`] past the second, so a stream's
//! every event is read as it arrives, not only its first; then the poller sleeps again (on a
//! timerfd armed before the next window by the median lateness of its own wake-ups, or until a
//! request is sent). A poller that wakes late is no worse off than one that never polled: the
//! answer wakes the thread as it would have, so its margin covers the typical wake-up, not the
//! pacer's rare late one. A token bucket keeps the polling within the worker's share of
//! `--poll-budget`; a window it cannot afford is slept through and counted. Streams in flight
//! most of the time therefore cost up to the budget (one core by default): the price of reading
//! each event the moment it comes, reported as `answer_poll.polled_cores`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use gatebench_shared::wake::{Spin, WakeMargin, PAD_NS, RECOMPUTE_EVERY, START_MARGIN_NS};
use tokio::sync::Notify;

use crate::generator::alarm::Alarm;
use crate::results::pacing::AnswerPollReport;
use crate::wire::clock::RunClock;

/// How many recent answers the expected times are drawn from.
const RECENT: usize = 64;
/// Answers needed before any polling.
const MIN_SAMPLES: usize = 8;
/// The quantiles of recent answers the window spans.
const LOW: f64 = 0.05;
const HIGH: f64 = 0.95;
/// How far before the low quantile and past the high one a window reaches.
pub(super) const LEAD_NS: u64 = 20_000;
/// Most polling time the budget saves up, in ns of one core.
const MAX_CREDIT_NS: f64 = 10_000_000.0;

/// One worker's requests in flight, its recent answers and its account of polling.
#[derive(Debug)]
pub(super) struct AnswerPoll {
    clock: RunClock,
    /// This worker's share of the budget, in cores (at most 1).
    budget: f64,
    /// Requests in flight, in the order they were sent.
    pending: RefCell<Pending>,
    /// Recent times from dispatch to first byte (their low quantile), and to the whole answer
    /// (their high one).
    recent: RefCell<Recent>,
    recent_done: RefCell<Recent>,
    /// Told when a request is sent while the poller has nothing to wait for.
    sent: Notify,
    account: RefCell<Account>,
}

/// A request the poller waits for, until it is answered or dropped (nothing with a zero
/// budget).
pub(super) struct Awaited<'a> {
    poll: Option<&'a AnswerPoll>,
    id: u64,
}

impl Drop for Awaited<'_> {
    fn drop(&mut self) {
        if let Some(poll) = self.poll {
            poll.pending.borrow_mut().answered(self.id);
        }
    }
}

impl AnswerPoll {
    /// A poller on `clock` with `budget` cores (0: it never polls).
    pub(super) fn new(clock: RunClock, budget: f64) -> AnswerPoll {
        AnswerPoll {
            clock,
            budget: budget.clamp(0.0, 1.0),
            pending: RefCell::default(),
            recent: RefCell::new(Recent::new(LOW)),
            recent_done: RefCell::new(Recent::new(HIGH)),
            sent: Notify::new(),
            account: RefCell::default(),
        }
    }

    /// Whether this poller ever polls. With a zero budget it keeps no account of requests in
    /// flight or of recent answers: nothing would read them. Keeping the answers cost 435
    /// instructions a request (`Recent::add`, inclusive), and skipping all of it took 310-420
    /// off the whole request (callgrind, a closed loop of 64 against nginx).
    fn polls(&self) -> bool {
        self.budget > 0.0
    }

    /// A request dispatched at `dispatched_ns`, waited for while the guard lives.
    pub(super) fn sent(&self, dispatched_ns: u64) -> Awaited<'_> {
        if !self.polls() {
            return Awaited { poll: None, id: 0 };
        }
        let id = self.pending.borrow_mut().sent(dispatched_ns);
        self.sent.notify_one();
        Awaited {
            poll: Some(self),
            id,
        }
    }

    /// An answer's first byte came `first_ns` after its dispatch, its end `done_ns` after it.
    pub(super) fn answered(&self, first_ns: u64, done_ns: u64) {
        if !self.polls() {
            return;
        }
        self.recent.borrow_mut().add(first_ns);
        self.recent_done.borrow_mut().add(done_ns.max(first_ns));
    }

    /// An answer whose first byte was its end, `ns` after its dispatch.
    #[cfg(test)]
    fn answered_after(&self, ns: u64) {
        self.answered(ns, ns);
    }

    /// From how long after dispatch to how long an answer is being read: from the low quantile
    /// of first bytes to the high quantile of ends (for a stream, its last event).
    fn expected(&self) -> Option<(u64, u64)> {
        let low = self.recent.borrow().expected()?;
        let high = self.recent_done.borrow().expected()?;
        Some((low, high.max(low)))
    }

    /// The account so far.
    pub(super) fn report(&self) -> AnswerPollReport {
        let account = self.account.borrow();
        let (from, to) = self.expected().unwrap_or((0, 0));
        AnswerPollReport {
            budget_cores: self.budget,
            polled_s: account.polled_ns as f64 / 1e9,
            polled_cores: 0.0,
            windows: account.windows,
            over_budget: account.over_budget,
            expected_from_us: from as f64 / 1e3,
            expected_to_us: to as f64 / 1e3,
        }
    }

    /// The next window to poll in at `now`: the earliest request in flight whose window has
    /// not ended, as (start, end); `None` with nothing to poll for.
    fn next_window(&self, now: u64) -> Option<(u64, u64)> {
        let (low, high) = self.expected()?;
        let reach = high + LEAD_NS;
        let oldest_open = now.saturating_sub(reach);
        let dispatched = self.pending.borrow().earliest_since(oldest_open)?;
        Some((
            (dispatched + low).saturating_sub(LEAD_NS),
            dispatched + reach,
        ))
    }

    /// The poller: runs for the worker's life (dropped with its tasks).
    pub(super) async fn run(&self) -> io::Result<()> {
        if !self.polls() {
            return Ok(());
        }
        let mut timer = PollTimer::new(&self.clock)?;
        let mut last = self.clock.now_ns();
        loop {
            let now = self.clock.now_ns();
            self.account.borrow_mut().earn(now - last, self.budget);
            last = now;
            let Some((start, end)) = self.next_window(now) else {
                self.account.borrow_mut().polling = false;
                self.sent.notified().await;
                continue;
            };
            let wake_at = start.saturating_sub(timer.margin_ns);
            if now < wake_at {
                self.account.borrow_mut().polling = false;
                timer.sleep_until(&self.clock, wake_at).await?;
                continue;
            }
            if !self.account.borrow_mut().afford() {
                timer.sleep_until(&self.clock, end).await?;
                continue;
            }
            self.poll_once(now, &timer.alarm).await;
        }
    }

    /// One turn of polling: yields so the runtime polls its sockets (and runs what they woke);
    /// on simulated time, a spin's turn of it passes.
    async fn poll_once(&self, from: u64, alarm: &Alarm) {
        {
            let mut account = self.account.borrow_mut();
            if !account.polling {
                account.polling = true;
                account.windows += 1;
            }
        }
        alarm.spin_turn().await;
        let spent = self.clock.now_ns().saturating_sub(from);
        self.account.borrow_mut().spend(spent);
    }
}

/// Requests in flight, in the order they were sent (a worker sends on one thread, so by
/// dispatch time): a ring that grows to the most ever in flight and then allocates no more.
#[derive(Debug, Default)]
struct Pending {
    /// (dispatch time, answered), the first being request `first_id`.
    ring: VecDeque<(u64, bool)>,
    first_id: u64,
}

impl Pending {
    /// A request sent at `dispatched_ns`; its id.
    fn sent(&mut self, dispatched_ns: u64) -> u64 {
        self.ring.push_back((dispatched_ns, false));
        self.first_id + self.ring.len() as u64 - 1
    }

    /// Request `id` is answered (or dropped).
    fn answered(&mut self, id: u64) {
        if let Some(entry) = self.ring.get_mut((id - self.first_id) as usize) {
            entry.1 = true;
        }
        while self.ring.front().is_some_and(|e| e.1) {
            self.ring.pop_front();
            self.first_id += 1;
        }
    }

    /// The dispatch time of the earliest request in flight sent at or after `since_ns`.
    fn earliest_since(&self, since_ns: u64) -> Option<u64> {
        let from = self.ring.partition_point(|e| e.0 < since_ns);
        self.ring.range(from..).find(|e| !e.1).map(|e| e.0)
    }
}

/// What polling has cost, and what the budget still allows.
#[derive(Debug, Default)]
struct Account {
    polled_ns: u64,
    windows: u64,
    over_budget: u64,
    /// Polling time the budget allows now, in ns of one core (negative: overspent).
    credit_ns: f64,
    polling: bool,
}

impl Account {
    /// `elapsed_ns` passed at `budget` cores.
    fn earn(&mut self, elapsed_ns: u64, budget: f64) {
        self.credit_ns = (self.credit_ns + elapsed_ns as f64 * budget).min(MAX_CREDIT_NS);
    }

    fn spend(&mut self, ns: u64) {
        self.polled_ns += ns;
        self.credit_ns -= ns as f64;
    }

    /// Whether the budget allows polling now; counts a window given up when it does not.
    fn afford(&mut self) -> bool {
        if self.credit_ns > 0.0 {
            return true;
        }
        self.over_budget += 1;
        self.polling = false;
        false
    }
}

/// The last [`RECENT`] times from dispatch to an answer's first byte or its end, and one
/// quantile of them.
#[derive(Debug)]
struct Recent {
    /// The quantile kept ([`LOW`] of first bytes, [`HIGH`] of ends).
    quantile: f64,
    ring: Vec<u64>,
    next: usize,
    /// The quantile, recomputed every few answers.
    expected: Option<u64>,
    since: usize,
}

impl Recent {
    fn new(quantile: f64) -> Recent {
        Recent {
            quantile,
            ring: Vec::with_capacity(RECENT),
            next: 0,
            expected: None,
            since: 0,
        }
    }

    fn add(&mut self, ns: u64) {
        if self.ring.len() < RECENT {
            self.ring.push(ns);
        } else {
            self.ring[self.next] = ns;
            self.next = (self.next + 1) % RECENT;
        }
        self.since += 1;
        if self.ring.len() >= MIN_SAMPLES && (self.expected.is_none() || self.since >= 8) {
            self.since = 0;
            let rank = ((self.ring.len() - 1) as f64 * self.quantile).round() as usize;
            self.expected = Some(ranked(&self.ring, rank));
        }
    }

    /// The quantile's time after dispatch, once enough answers came.
    fn expected(&self) -> Option<u64> {
        self.expected
    }
}

/// Most values a one-pass [`ranked`] keeps: the ring's quantiles are 3 from either end.
const FEW: usize = 8;

/// The value of `rank` (from 0) among `values` in ascending order. A rank near either end (all
/// the ring's are) is found in one pass that keeps the few values nearest that end, without a
/// copy of the ring (a rank further in is selected from a copy). Against nginx at 64
/// connections, both rings' upkeep (`Recent::add`, inclusive) cost 490 instructions a request
/// with a copy and `select_nth_unstable`, 435 with this pass (callgrind); the copy's `memcpy`
/// was counted apart, and the whole request fell by 122.
fn ranked(values: &[u64], rank: usize) -> u64 {
    debug_assert!(rank < values.len(), "rank {rank} of {}", values.len());
    let from_top = values.len() - 1 - rank;
    if rank.min(from_top) >= FEW {
        let mut copy = values.to_vec();
        return *copy.select_nth_unstable(rank).1;
    }
    // The k + 1 values nearest the end, ordered from it; the last kept is the answer. Values
    // are flipped for the top end, so both ends are a search for the smallest.
    let (k, flip) = if rank <= from_top {
        (rank, 0)
    } else {
        (from_top, u64::MAX)
    };
    let mut kept = [u64::MAX; FEW];
    let nearest = &mut kept[..=k];
    for &value in values {
        let value = value ^ flip;
        if value < nearest[k] {
            let at = nearest.partition_point(|&v| v <= value);
            nearest.copy_within(at..k, at + 1);
            nearest[at] = value;
        }
    }
    nearest[k] ^ flip
}

/// The poller's timer: armed early by the median lateness of its wake-ups.
struct PollTimer {
    alarm: Alarm,
    /// The lateness of its wake-ups (a margin of 0: only the tally is used).
    seen: WakeMargin,
    margin_ns: u64,
}

impl PollTimer {
    fn new(clock: &RunClock) -> io::Result<PollTimer> {
        Ok(PollTimer {
            alarm: Alarm::for_clock(clock)?,
            seen: WakeMargin::new(Spin::Fixed(Duration::ZERO)),
            margin_ns: START_MARGIN_NS,
        })
    }

    /// Sleeps until `at_ns` of `clock`, and learns how late the timer woke.
    async fn sleep_until(&mut self, clock: &RunClock, at_ns: u64) -> io::Result<()> {
        let late = self.alarm.sleep_until(clock, at_ns).await?;
        self.seen.observe(late);
        let tally = self.seen.tally();
        if tally.total() % u64::from(RECOMPUTE_EVERY) == 0 {
            self.margin_ns = tally.quantile_ns(0.5) + PAD_NS;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_window_follows_recent_answers() {
        let mut recent = [Recent::new(LOW), Recent::new(HIGH)];
        let add = |recent: &mut [Recent; 2], ns| recent.iter_mut().for_each(|r| r.add(ns));
        for _ in 0..MIN_SAMPLES - 1 {
            add(&mut recent, 100_000);
        }
        assert_eq!(
            recent[0].expected(),
            None,
            "too few answers to expect anything"
        );
        add(&mut recent, 100_000);
        assert_eq!(recent[0].expected(), Some(100_000));
        assert_eq!(recent[1].expected(), Some(100_000));
        // A new regime replaces the old within the ring.
        for i in 0..RECENT as u64 {
            add(&mut recent, 3_000_000 + i * 1_000);
        }
        let [low, high] = recent.map(|r| r.expected().unwrap());
        assert!((3_000_000..3_010_000).contains(&low), "{low}");
        assert!((3_050_000..=3_063_000).contains(&high), "{high}");
    }

    #[test]
    fn a_rank_is_the_value_a_sort_puts_there() {
        // Seeded values with repeats, every length up to past the ring's, every rank.
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for len in 1..=RECENT + 9 {
            let values: Vec<u64> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 50
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable();
            for (rank, want) in sorted.iter().enumerate() {
                assert_eq!(ranked(&values, rank), *want, "{values:?} rank {rank}");
            }
        }
        assert_eq!(ranked(&[u64::MAX, 0, u64::MAX - 1], 1), u64::MAX - 1);
        assert_eq!(ranked(&[u64::MAX, 0, u64::MAX], 2), u64::MAX);
    }

    #[test]
    fn a_streams_window_lasts_from_its_first_byte_to_its_last_event() {
        let poll = AnswerPoll::new(RunClock::starting_in(Duration::ZERO), 1.0);
        // Streams: first byte 100 µs after dispatch, the last event 5 ms after it.
        for _ in 0..MIN_SAMPLES {
            poll.answered(100_000, 5_000_000);
        }
        let _a = poll.sent(1_000_000);
        assert_eq!(
            poll.next_window(1_000_000),
            Some((
                1_000_000 + 100_000 - LEAD_NS,
                1_000_000 + 5_000_000 + LEAD_NS
            ))
        );
        // Halfway through the stream it is still being read.
        assert!(poll.next_window(3_500_000).is_some());
        assert_eq!(poll.next_window(6_100_000), None, "past its end");
    }

    #[test]
    fn requests_answered_out_of_order_leave_the_ring_once_those_before_them_have() {
        let mut pending = Pending::default();
        let (a, b, c) = (pending.sent(10), pending.sent(20), pending.sent(30));
        pending.answered(b);
        assert_eq!(pending.earliest_since(0), Some(10));
        assert_eq!(pending.earliest_since(11), Some(30), "b is answered");
        pending.answered(a);
        assert_eq!((pending.ring.len(), pending.first_id), (1, 2));
        pending.answered(c);
        assert!(pending.ring.is_empty());
        assert_eq!(pending.earliest_since(0), None);
        assert_eq!(pending.sent(40), 3, "ids go on where they were");
    }

    #[test]
    fn the_window_is_the_earliest_open_request_s() {
        let poll = AnswerPoll::new(RunClock::starting_in(Duration::ZERO), 1.0);
        for _ in 0..MIN_SAMPLES {
            poll.answered_after(100_000);
        }
        assert_eq!(poll.next_window(0), None, "nothing in flight");
        let a = poll.sent(1_000_000);
        let _b = poll.sent(2_000_000);
        let w = |d: u64| (d + 100_000 - LEAD_NS, d + 100_000 + LEAD_NS);
        assert_eq!(poll.next_window(1_000_000), Some(w(1_000_000)));
        // Past a's window, b's is next; once a is answered, b's too.
        assert_eq!(poll.next_window(1_200_000), Some(w(2_000_000)));
        drop(a);
        assert_eq!(poll.next_window(1_000_000), Some(w(2_000_000)));
        assert_eq!(poll.next_window(2_200_000), None, "b's window is over");
    }

    #[test]
    fn the_budget_bounds_the_polling() {
        let mut account = Account::default();
        assert!(!account.afford(), "nothing earned yet");
        account.earn(1_000_000, 0.1);
        assert!(account.afford());
        account.spend(150_000);
        assert!(!account.afford(), "0.1 of 1 ms is 100 µs, 150 spent");
        assert_eq!(account.over_budget, 2);
        account.earn(u64::MAX / 2, 1.0);
        assert!(account.credit_ns <= MAX_CREDIT_NS);
    }

    #[tokio::test]
    async fn a_zero_budget_never_polls() {
        let poll = AnswerPoll::new(RunClock::starting_in(Duration::ZERO), 0.0);
        for _ in 0..MIN_SAMPLES {
            poll.answered_after(10_000);
        }
        let _a = poll.sent(0);
        poll.run().await.unwrap();
        let r = poll.report();
        assert_eq!((r.windows, r.polled_s, r.budget_cores), (0, 0.0, 0.0));
    }

    #[test]
    fn a_zero_budget_keeps_no_account_of_requests_or_answers() {
        let poll = AnswerPoll::new(RunClock::starting_in(Duration::ZERO), 0.0);
        for _ in 0..MIN_SAMPLES {
            poll.answered_after(10_000);
        }
        let a = poll.sent(0);
        assert!(poll.pending.borrow().ring.is_empty());
        drop(a);
        assert!(poll.recent.borrow().ring.is_empty() && poll.recent_done.borrow().ring.is_empty());
        assert_eq!(poll.expected(), None, "no answers kept");
        let r = poll.report();
        assert_eq!((r.expected_from_us, r.expected_to_us), (0.0, 0.0));
    }
}
