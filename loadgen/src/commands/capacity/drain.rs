//! Waiting for a target to drain. An overloaded step leaves a backlog behind: requests loadgen
//! gave up on (timed out, or cancelled after the grace) that the target still serves. A step
//! run on top of that backlog measures the last step, not its own rate. So before a step that
//! follows a missed one, the search probes the target, one request at a time, until one is
//! answered about as fast as the target answered when idle. A target that serves in turn
//! answers a probe only once what was queued before it is served, so the first probe often
//! waits out the whole backlog.

use std::time::Duration;

use super::stepper::Stepper;
use crate::results::capacity::Drain;

/// Probes of the idle target before the search, of which the fastest is its idle time.
const IDLE_PROBES: usize = 3;
/// A probe answered within twice the idle time and this much more finds the target drained.
const SLACK: Duration = Duration::from_millis(1);
/// The pause between probes.
const GAP: Duration = Duration::from_millis(100);
/// The longest wait: a target not drained by then is stepped on regardless, and the step
/// says so.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(30);

/// The idle target's response time: the fastest of a few probes (`None`: none was answered).
pub(crate) fn idle_time(stepper: &mut dyn Stepper) -> Option<Duration> {
    (0..IDLE_PROBES)
        .map(|_| stepper.probe())
        .filter(|p| p.answered)
        .map(|p| p.took)
        .min()
}

/// Probes until the target answers within `idle`'s bound, or [`MAX_WAIT`] has passed.
pub(crate) fn drain(stepper: &mut dyn Stepper, idle: Duration, stop: &dyn Fn() -> bool) -> Drain {
    let bound = idle * 2 + SLACK;
    let mut waited = Duration::ZERO;
    let mut probes = 0;
    loop {
        let probe = stepper.probe();
        probes += 1;
        waited += probe.took;
        let drained = probe.answered && probe.took <= bound;
        if drained || waited >= MAX_WAIT || stop() {
            return Drain {
                waited_ms: waited.as_secs_f64() * 1e3,
                probes,
                drained,
                bound_ms: bound.as_secs_f64() * 1e3,
            };
        }
        stepper.pause(GAP);
        waited += GAP;
    }
}
