//! The run's clock: one `CLOCK_MONOTONIC` for every deadline and every reading, counted from
//! the start of the run.

use std::time::Duration;

use gatebench_shared::clock::monotonic_ns;

/// The run's clock: nanoseconds since the start of the run, on `CLOCK_MONOTONIC`.
#[derive(Debug, Clone)]
pub struct RunClock {
    /// `CLOCK_MONOTONIC` at the start of the run, in ns.
    pub(crate) start_mono_ns: u64,
}

impl RunClock {
    /// A clock whose zero is `lead` from now (so workers can get ready before the first slot).
    pub fn starting_in(lead: Duration) -> RunClock {
        RunClock {
            start_mono_ns: monotonic_ns() + lead.as_nanos() as u64,
        }
    }

    /// Nanoseconds since the start of the run (0 before it).
    pub fn now_ns(&self) -> u64 {
        self.ns_of(monotonic_ns())
    }

    /// Nanoseconds until the start of the run (0 once it started).
    pub fn until_start_ns(&self) -> u64 {
        self.start_mono_ns.saturating_sub(monotonic_ns())
    }

    /// A `CLOCK_MONOTONIC` reading (ns) as nanoseconds since the start of the run (0 before it).
    pub fn ns_of(&self, mono_ns: u64) -> u64 {
        mono_ns.saturating_sub(self.start_mono_ns)
    }
}
