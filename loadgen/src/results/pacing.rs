//! What a run's workers spent waiting precisely: the pacer's margin and wake-ups (a
//! [`WakeReport`], shared with the mock) and the time spent polling for answers that were due.

use serde::{Deserialize, Serialize};

pub use gatebench_shared::wake::WakeReport;

/// How the workers polled for due answers instead of sleeping until the kernel woke them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnswerPollReport {
    /// Most cores the workers could spend polling (`--poll-budget`; 0: never polled).
    pub budget_cores: f64,
    /// Time spent polling, in seconds of one core (it overlaps the pacer's spin, on the same
    /// thread).
    pub polled_s: f64,
    /// `polled_s` over the run: the cores polling cost.
    pub polled_cores: f64,
    /// Stretches of polling begun: each starts a little before a request's answer was expected.
    pub windows: u64,
    /// Stretches not polled (or cut short) because the budget was spent.
    pub over_budget: u64,
    /// The answers polled for were expected from this long after the send (a low quantile of
    /// the worker's recent times to first byte) to this long (a high one), at the end of the
    /// run; the widest of the workers'. Both 0 when no worker polled (`--poll-budget 0`) or had
    /// its first few answers.
    pub expected_from_us: f64,
    pub expected_to_us: f64,
}

impl AnswerPollReport {
    /// Adds another worker's account.
    pub fn add(&mut self, other: &AnswerPollReport) {
        self.budget_cores += other.budget_cores;
        self.polled_s += other.polled_s;
        self.windows += other.windows;
        self.over_budget += other.over_budget;
        if self.expected_to_us == 0.0 {
            self.expected_from_us = other.expected_from_us;
        } else if other.expected_to_us > 0.0 {
            self.expected_from_us = self.expected_from_us.min(other.expected_from_us);
        }
        self.expected_to_us = self.expected_to_us.max(other.expected_to_us);
    }
}
