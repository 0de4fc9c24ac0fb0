//! Waiting out a target's backlog. An overloaded step leaves one behind: requests loadgen gave
//! up on (timed out, or cancelled after the grace) that the target still serves. A step run on
//! top of it measures the step before it. So before the search, the idle target's response time
//! is taken (the fastest of three requests sent alone), and before a step that follows a missed
//! one, the search sends one request at a time until one is answered within twice that plus
//! 1 ms. A target that serves in turn answers that request only once what was queued before it
//! is served, so the first one often waits the whole backlog out.

use std::time::Duration;

use super::stepper::{Probe, Stepper};
use crate::results::capacity::BacklogWait;
use crate::wire::outcome::ErrorKind;

/// Requests sent alone to the idle target before the search; the fastest answered is its idle
/// time.
const IDLE_PROBES: usize = 3;
/// A probe answered within twice the idle time and this much more finds the backlog gone.
const SLACK: Duration = Duration::from_millis(1);
/// The pause between probes.
const GAP: Duration = Duration::from_millis(100);
/// The longest wait: a target still slow by then is stepped on regardless, and the step says
/// so.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// The idle target's response time: the fastest of a few probes (`None`: none was answered).
pub(crate) fn idle_time(stepper: &mut dyn Stepper) -> Option<Duration> {
    (0..IDLE_PROBES)
        .map(|_| stepper.probe())
        .filter(|p| p.error.is_none())
        .map(|p| p.took)
        .min()
}

/// Probes until the target answers within `idle`'s bound, [`MAX_WAIT`] has passed, it refuses
/// connections, or `stop` says so. Returns the wait, and the fastest answer seen (a truer idle
/// time, when the first was taken on a busy target).
pub(crate) fn wait(
    stepper: &mut dyn Stepper,
    idle: Duration,
    stop: &dyn Fn() -> bool,
) -> (BacklogWait, Option<Duration>) {
    let bound = idle * 2 + SLACK;
    let mut waited = Duration::ZERO;
    let mut probes = 0;
    let mut fastest: Option<Duration> = None;
    loop {
        let Probe { took, error } = stepper.probe();
        probes += 1;
        waited += took;
        if error.is_none() {
            fastest = Some(fastest.map_or(took, |f| f.min(took)));
        }
        let cleared = error.is_none() && took <= bound;
        if cleared || waited >= MAX_WAIT || error.is_some_and(refused) || stop() {
            let wait = BacklogWait {
                waited_ms: waited.as_secs_f64() * 1e3,
                probes,
                cleared,
                bound_ms: bound.as_secs_f64() * 1e3,
                last_error: error.map(ErrorKind::key),
            };
            return (wait, fastest);
        }
        stepper.pause(GAP);
        waited += GAP;
    }
}

/// The target cannot be reached at all: no wait will clear that.
fn refused(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ConnectRefused | ErrorKind::Connect | ErrorKind::ConnectTimeout | ErrorKind::Tls
    )
}
