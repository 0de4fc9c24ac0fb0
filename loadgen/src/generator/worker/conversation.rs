//! A worker's sessions: each one a task that sends its turns in order (`turns`). One pacer
//! waits for whatever is due next, a session's start (from the schedule: sessions per second,
//! open loop) or a turn after its think time (`Alarms`), so every turn leaves on time and its
//! latency counts from when it was due: the end of the previous turn plus the think time, not
//! when it was sent.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;

use gatebench_shared::wake::WakeMargin;

use super::alarms::Alarms;
use super::client::Client;
use super::turns::{run_session, tally, warmed, Pace, Shared};
use super::{past_sending, InFlight, Running};
use crate::generator::recorder::Recorder;
use crate::generator::schedule::Schedule;
use crate::generator::sessions::plan::SessionPlan;
use crate::model::load::Arrival;

/// Something the pacer starts: a session (from the schedule) or a user (user-centric mode).
#[derive(Debug, Clone, Copy)]
enum Start {
    Session { index: u64, due_ns: u64 },
    User { user: u64, due_ns: u64 },
}

/// Sends this worker's sessions (its slots of the schedule, or its users) until sending is
/// over and every started session has ended; paced with `margin`, returned with what it saw.
pub(super) async fn send_sessions(
    ctx: &Rc<Running>,
    recorder: &Rc<RefCell<Recorder>>,
    pool: &Rc<Client>,
    in_flight: &Rc<InFlight>,
    (rate, arrival): (f64, Arrival),
    margin: WakeMargin,
) -> Result<WakeMargin, String> {
    let spec = &ctx.spec;
    // Invariant: a worker sends sessions only when its plan has them.
    let plan = spec.plan.sessions.clone().expect("a plan with sessions");
    let (pacer, first, stride) = super::pacer_and_slots(ctx, margin)?;
    let mut starts = starts(
        &plan,
        (rate, arrival),
        spec.plan.seed,
        first,
        stride,
        &spec.plan.pace,
    );
    let shared = Rc::new(Shared {
        ctx: ctx.clone(),
        recorder: recorder.clone(),
        pool: pool.clone(),
        plan: plan.clone(),
        alarms: Alarms::default(),
        active: Cell::new(0),
    });
    let bound = plan
        .max_sessions
        .map_or(usize::MAX, |n| n.div_ceil(spec.plan.threads).max(1));
    let mut queued: VecDeque<Start> = VecDeque::new();
    // Sessions started in the window run to their end, or until the grace after it.
    let give_up_ns = spec
        .end_ns
        .zip(spec.plan.grace)
        .map(|(end, grace)| end + grace.as_nanos() as u64);
    loop {
        let over = give_up_ns.is_some_and(|at| ctx.clock.now_ns() >= at);
        if spec.progress.stop.load(Relaxed) || over {
            shared.alarms.stop();
            break;
        }
        while shared.active.get() < bound {
            let Some(start) = queued.pop_front() else {
                break;
            };
            launch(&shared, in_flight, start, true);
        }
        let next_start = starts
            .peek()
            .map(|s| s.due_ns())
            .filter(|due| !past_sending(spec, *due));
        let next = match (next_start, shared.alarms.earliest()) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) if shared.active.get() == 0 && queued.is_empty() => break,
            (None, None) => {
                // Only turns in flight: wait for one to end or be due, or for a stop.
                tokio::select! {
                    biased;
                    _ = shared.alarms.changed.notified() => {}
                    _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
                }
                continue;
            }
        };
        let next = give_up_ns.map_or(next, |at| next.min(at));
        tokio::select! {
            biased;
            waited = pacer.wait_until(next) => waited.map_err(|e| format!("timerfd: {e}"))?,
            _ = shared.alarms.changed.notified() => continue,
            _ = stop_asked(&spec.progress) => continue,
        }
        let now = ctx.clock.now_ns();
        shared.alarms.fire(now);
        while let Some(start) =
            starts.next_if(|s| s.due_ns() <= now && !past_sending(spec, s.due_ns()))
        {
            recorder.borrow_mut().dispatch(start.due_ns(), now);
            if shared.active.get() < bound && queued.is_empty() {
                launch(&shared, in_flight, start, false);
            } else {
                queued.push_back(start);
            }
        }
    }
    Ok(pacer.into_margin())
}

/// Resolves once a stop is asked (Ctrl-C, SIGTERM), looking every 50 ms.
async fn stop_asked(progress: &super::Progress) {
    while !progress.stop.load(Relaxed) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

impl Start {
    fn due_ns(self) -> u64 {
        match self {
            Start::Session { due_ns, .. } | Start::User { due_ns, .. } => due_ns,
        }
    }
}

/// The starts of this worker, in due order: its slots of the session schedule, or its users'
/// first turns spread over one gap.
fn starts(
    plan: &SessionPlan,
    (rate, arrival): (f64, Arrival),
    seed: u64,
    first: u64,
    stride: u64,
    pace: &crate::generator::rate_curve::RateCurve,
) -> std::iter::Peekable<Box<dyn Iterator<Item = Start>>> {
    let iter: Box<dyn Iterator<Item = Start>> = match plan.users {
        Some(users) => {
            let (count, gap) = (users.count as u64, users.gap_ns);
            Box::new(
                (first..count)
                    .step_by(stride as usize)
                    .map(move |user| Start::User {
                        user,
                        due_ns: user * gap / count,
                    }),
            )
        }
        None => Box::new(
            Schedule::paced(arrival, rate, seed, first, stride, pace)
                .map(|(index, due_ns)| Start::Session { index, due_ns }),
        ),
    };
    iter.peekable()
}

/// Starts a session or a user in its own task; `waited` when it waited for a place.
fn launch(shared: &Rc<Shared>, in_flight: &Rc<InFlight>, start: Start, waited: bool) {
    shared.active.set(shared.active.get() + 1);
    in_flight.start();
    let (shared, in_flight) = (shared.clone(), in_flight.clone());
    tokio::task::spawn_local(async move {
        match start {
            Start::Session { index, due_ns } => {
                let measured = !shared.recorder.borrow().in_warmup(due_ns);
                warmed(&shared, measured);
                tally(&shared, measured, |t| {
                    t.session_started(due_ns);
                    t.waited += u64::from(waited);
                });
                let mut pace = Pace::Think;
                run_session(&shared, index, due_ns, &mut pace, measured).await;
            }
            Start::User { user, due_ns } => run_user(&shared, user, due_ns).await,
        }
        shared.active.set(shared.active.get() - 1);
        shared.alarms.changed.notify_one();
        in_flight.end();
    });
}

/// One user of the user-centric mode: its sessions back to back (sessions `user`,
/// `user + users`, …), one turn every gap, until sending is over.
async fn run_user(shared: &Rc<Shared>, user: u64, first_due_ns: u64) {
    // Invariant: users are started only in the user-centric mode.
    let users = shared.plan.users.expect("users");
    let mut pace = Pace::Gap {
        gap_ns: users.gap_ns,
        next_ns: first_due_ns,
    };
    let mut index = user;
    loop {
        let due_ns = pace.next_due(0, 0);
        if past_sending(&shared.ctx.spec, due_ns) {
            break;
        }
        let measured = !shared.recorder.borrow().in_warmup(due_ns);
        warmed(shared, measured);
        shared
            .recorder
            .borrow_mut()
            .dispatch(due_ns, shared.ctx.clock.now_ns());
        tally(shared, measured, |t| t.session_started(due_ns));
        if !run_session(shared, index, due_ns, &mut pace, measured).await {
            break;
        }
        index += users.count as u64;
    }
}
