//! A comparison's trials: every target in turn, trial after trial, with a settle between runs,
//! until Ctrl-C.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::run::{run_target_watched, stop_requested, Window};
use crate::generator::plan::Plan;
use crate::model::target::Named;
use crate::results::compare::TrialRun;
use crate::results::run::TargetRun;

/// Runs `trials` alternating trials of `plan`'s load on every target (direct first), until
/// Ctrl-C; `label` prefixes the progress lines.
pub(crate) fn run_trials(
    plan: &Plan,
    targets: &[Named],
    trials: usize,
    settle: Duration,
    label: &str,
) -> Vec<TrialRun> {
    run_trials_watched(plan, targets, trials, settle, label, &mut |_, _| {})
}

/// [`run_trials`], telling `watch` when each run's measured window opens and closes, and for
/// which target.
pub(crate) fn run_trials_watched(
    plan: &Plan,
    targets: &[Named],
    trials: usize,
    settle: Duration,
    label: &str,
    watch: &mut dyn FnMut(&Named, Window),
) -> Vec<TrialRun> {
    let mut run = |plan, t: &Named, watch: &mut dyn FnMut(Window)| {
        run_target_watched(plan, t.target.clone(), watch)
    };
    let (settle, mut pause) = (settle, pause);
    run_trials_on(
        plan,
        targets,
        trials,
        (settle, &mut pause),
        label,
        &mut run,
        watch,
    )
}

/// A run of one target under a plan, telling the watcher of its window.
pub(crate) type RunOne<'a> = dyn FnMut(Arc<Plan>, &Named, &mut dyn FnMut(Window)) -> TargetRun + 'a;

/// [`run_trials_watched`], each target run by `run` and each settle waited by `settle.1` (on
/// the wire and the real clock, or in tests a model on simulated time).
pub(crate) fn run_trials_on(
    plan: &Plan,
    targets: &[Named],
    trials: usize,
    settle: (Duration, &mut dyn FnMut(Duration)),
    label: &str,
    run: &mut RunOne<'_>,
    watch: &mut dyn FnMut(&Named, Window),
) -> Vec<TrialRun> {
    let (settle, pause) = settle;
    let shared = Arc::new(plan.clone());
    let mut runs = Vec::new();
    'trials: for trial in 0..trials {
        for (i, t) in targets.iter().enumerate() {
            if !runs.is_empty() {
                pause(settle);
            }
            if stop_requested() {
                break 'trials;
            }
            if !plan.quiet {
                gatebench_shared::say!("loadgen: {label}trial {}/{trials}, {}", trial + 1, t.name);
            }
            watch(t, Window::Starting);
            let plan = salted(&shared, trial, i);
            let run = run(plan, t, &mut |w| watch(t, w));
            watch(t, Window::Finished);
            runs.push(TrialRun {
                trial: trial + 1,
                name: t.name.clone(),
                run,
            });
        }
    }
    runs
}

/// `plan` for run `run` of trial `trial`: with sessions, salted so that no run reads a prompt
/// cache entry another run warmed (the direct runs would warm the gateway's otherwise).
fn salted(plan: &Arc<Plan>, trial: usize, run: usize) -> Arc<Plan> {
    match &plan.sessions {
        Some(sessions) => {
            let mut own = (**plan).clone();
            own.sessions = Some(Arc::new(sessions.salted(trial, run)));
            Arc::new(own)
        }
        None => plan.clone(),
    }
}

/// Sleeps for `settle`, waking early when the run is stopped.
pub(crate) fn pause(settle: Duration) {
    let until = std::time::Instant::now() + settle;
    while !stop_requested() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
