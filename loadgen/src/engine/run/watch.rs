//! Watching a run's workers from the coordinating thread: when the measured window opens and
//! closes, passing a stop or an abandon on to the workers, and the live line on a terminal.

use std::sync::atomic::Ordering::Relaxed;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::generator::plan::Plan;
use crate::generator::worker::{Progress, WorkerOutput};
use crate::wire::clock::RunClock;

/// A run's measured window, as it passes: it opens when the warm-up is over and closes at the
/// planned end (or when the workers finish first, or the run is stopped). A profiler samples
/// exactly this window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// Before the run sends anything (before its connections open): a probe that takes time
    /// to attach attaches here, and the run waits for it.
    Starting,
    Opened,
    Closed,
    /// After the run has drained and its result is summed.
    Finished,
}

/// The measured window's bounds on the run's clock, ns: it opens at the warm-up's end and, when
/// the run has a duration, closes that long after.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub(super) start_ns: u64,
    pub(super) end_ns: Option<u64>,
}

impl Bounds {
    pub(super) fn of(plan: &Plan) -> Bounds {
        let start_ns = plan.warmup.as_nanos() as u64;
        Bounds {
            start_ns,
            end_ns: plan.duration.map(|d| start_ns + d.as_nanos() as u64),
        }
    }
}

/// The coordinator's view of a started run.
pub(super) struct Coordinator<'a> {
    pub(super) clock: &'a RunClock,
    /// The process-wide flags, set by signals.
    pub(super) stop: &'a Progress,
    /// The run's own flags and counts, shared with its workers.
    pub(super) progress: &'a Progress,
    pub(super) bounds: Bounds,
    /// Whether to redraw the live line on stderr.
    pub(super) live: bool,
}

impl Coordinator<'_> {
    /// Waits for every worker to finish, telling `watch` when the measured window opens and
    /// closes (within a millisecond or so: it wakes at each boundary); returns when the run was
    /// stopped, ns on its clock, if it was.
    pub(super) fn watch(
        &self,
        handles: &[JoinHandle<WorkerOutput>],
        watch: &mut dyn FnMut(Window),
    ) -> Option<u64> {
        let mut stopped_at_ns = None;
        let (mut opened, mut closed) = (false, false);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(self.nap(opened, closed));
            if self.stop.stop.load(Relaxed) && stopped_at_ns.is_none() {
                self.progress.stop.store(true, Relaxed);
                stopped_at_ns = Some(self.clock.now_ns());
            }
            let now = self.clock.now_ns();
            if !opened && now >= self.bounds.start_ns {
                opened = true;
                watch(Window::Opened);
            }
            let ended = self.bounds.end_ns.is_some_and(|end| now >= end) || stopped_at_ns.is_some();
            if opened && !closed && ended {
                closed = true;
                watch(Window::Closed);
            }
            if self.stop.abandon.load(Relaxed) {
                self.progress.abandon.store(true, Relaxed);
            }
            if self.live {
                self.live_line();
            }
        }
        if opened && !closed {
            watch(Window::Closed);
        }
        if self.live {
            gatebench_shared::say!();
        }
        stopped_at_ns
    }

    /// How long to sleep: until the window's next boundary, at most 100 ms.
    fn nap(&self, opened: bool, closed: bool) -> Duration {
        let next = if !opened {
            Some(self.bounds.start_ns)
        } else {
            self.bounds.end_ns.filter(|_| !closed)
        };
        next.map_or(Duration::from_millis(100), |at| {
            Duration::from_nanos(at.saturating_sub(self.clock.now_ns()))
                .min(Duration::from_millis(100))
        })
    }

    fn live_line(&self) {
        let now = self.clock.now_ns();
        let phase = if now < self.bounds.start_ns {
            "warm-up"
        } else {
            "measuring"
        };
        eprint!(
            "\r{phase} {:>7.1}s  ok {:>9}  failed {:>7}   ",
            now as f64 / 1e9,
            self.progress.ok.load(Relaxed),
            self.progress.failed.load(Relaxed)
        );
    }
}
