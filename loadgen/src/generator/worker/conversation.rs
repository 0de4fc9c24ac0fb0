//! A worker's sessions: each one a task that sends its turns in order, every turn's body built
//! when it is due from the answers so far. One pacer waits for whatever is due next, a session's
//! start (from the schedule: sessions per second, open loop) or a turn after its think time
//! (`Alarms`), so every turn leaves on time and its latency counts from when it was due: the end
//! of the previous turn plus the think time, not when it was sent.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use bytes::Bytes;
use gatebench_shared::wake::WakeMargin;
use tokio::sync::{oneshot, Notify};

use super::client::{Client, Template};
use super::{past_sending, record, timed, InFlight, Running, Unrecorded};
use crate::generator::pacer::Pacer;
use crate::generator::recorder::Recorder;
use crate::generator::schedule::Schedule;
use crate::generator::sessions::answer;
use crate::generator::sessions::body::Conversation;
use crate::generator::sessions::plan::SessionPlan;
use crate::generator::sessions::record::NotSent;
use crate::results::plan::Arrival;
use crate::wire::exchange::Slot;
use crate::wire::outcome::{ErrorKind, Tag};

/// Turns waiting for their due time, earliest first, each woken by the worker's pacer.
#[derive(Debug, Default)]
struct Alarms {
    due: RefCell<BinaryHeap<Reverse<(u64, u64)>>>,
    waiting: RefCell<HashMap<u64, oneshot::Sender<u64>>>,
    next_id: Cell<u64>,
    /// An earlier due time, or a session that ended, for the pacer to look again.
    changed: Notify,
    /// The run stopped: no turn waits any more.
    stopped: Cell<bool>,
}

impl Alarms {
    /// Resolves at `due_ns` with when the pacer got to it; `Err` when the run stopped first.
    async fn at(&self, due_ns: u64) -> Result<u64, oneshot::error::RecvError> {
        if self.stopped.get() {
            // A dropped sender: the same answer as a turn that was waiting when the run stopped.
            let (tx, rx) = oneshot::channel::<u64>();
            drop(tx);
            return rx.await;
        }
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().insert(id, tx);
        self.due.borrow_mut().push(Reverse((due_ns, id)));
        self.changed.notify_one();
        rx.await
    }

    fn earliest(&self) -> Option<u64> {
        self.due.borrow().peek().map(|Reverse((due, _))| *due)
    }

    /// Wakes every turn due by `now_ns`.
    fn fire(&self, now_ns: u64) {
        let mut due = self.due.borrow_mut();
        while let Some(Reverse((at, id))) = due.peek().copied() {
            if at > now_ns {
                break;
            }
            due.pop();
            if let Some(tx) = self.waiting.borrow_mut().remove(&id) {
                let _ = tx.send(now_ns);
            }
        }
    }

    /// Wakes no one again: every waiting turn learns the run stopped.
    fn stop(&self) {
        self.stopped.set(true);
        self.due.borrow_mut().clear();
        self.waiting.borrow_mut().clear();
    }
}

/// What every session task of a worker shares.
struct Shared {
    ctx: Rc<Running>,
    recorder: Rc<RefCell<Recorder>>,
    pool: Rc<Client>,
    plan: Arc<SessionPlan>,
    alarms: Alarms,
    active: Cell<usize>,
}

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
    let pacer = Pacer::new(ctx.clock.clone(), margin).map_err(|e| format!("timerfd: {e}"))?;
    let (first, stride) = spec
        .plan
        .shard
        .slots(spec.index as u64, spec.plan.threads as u64);
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
                    _ = shared.alarms.changed.notified() => {}
                    _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
                }
                continue;
            }
        };
        let next = give_up_ns.map_or(next, |at| next.min(at));
        tokio::select! {
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
async fn run_user(shared: &Shared, user: u64, first_due_ns: u64) {
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

/// When a session's turns are due.
#[derive(Debug, Clone, Copy)]
enum Pace {
    /// The end of the previous turn plus the think time.
    Think,
    /// A user's cadence: one turn every `gap_ns`, the next at `next_ns`.
    Gap { gap_ns: u64, next_ns: u64 },
}

impl Pace {
    /// The due time of a turn after one that ended at `last_done_ns`, thinking `think_us`;
    /// moves a user's cadence on.
    fn next_due(&mut self, last_done_ns: u64, think_us: u64) -> u64 {
        match self {
            Pace::Think => last_done_ns + think_us * 1_000,
            Pace::Gap { gap_ns, next_ns } => {
                let due = *next_ns;
                *next_ns += *gap_ns;
                due
            }
        }
    }
}

/// How a session went: turns answered, when the last ended, and whether one failed.
struct Progress {
    answered: u64,
    last_done_ns: u64,
    failed: bool,
}

/// Runs session `index` (of the set, cycled) from `start_ns`; records it when `measured`.
/// Returns false when the run stopped under it.
async fn run_session(
    shared: &Shared,
    index: u64,
    start_ns: u64,
    pace: &mut Pace,
    measured: bool,
) -> bool {
    let plan = &shared.plan;
    let set = &plan.set.sessions;
    let session = &set[(index % set.len() as u64) as usize];
    let base = &shared.ctx.spec.plan.request.body;
    let mut conversation = Conversation::new(plan.dialect, base, session, plan.salt.as_deref());
    let mut progress = Progress {
        answered: 0,
        last_done_ns: start_ns,
        failed: false,
    };
    let mut request_no: u16 = 0;
    let mut unanswered: Vec<answer::ToolCall> = Vec::new();
    let mut stopped = false;
    let mut turns_left = session.turns.len() as u64;
    for (k, turn) in session.turns.iter().enumerate() {
        let think_us = plan.think_us(shared.ctx.spec.plan.seed, index, k, turn.think_us);
        let due_ns = match (k, *pace) {
            (0, Pace::Think) => start_ns + think_us * 1_000,
            (0, Pace::Gap { .. }) => start_ns,
            _ => pace.next_due(progress.last_done_ns, think_us),
        };
        turns_left -= 1;
        if !unanswered.is_empty() {
            // The last turn's rounds were spent: its calls still get their results first.
            conversation.tool_results(&unanswered, turn.tool_result_tokens);
            unanswered.clear();
        }
        conversation.user(&turn.user);
        let mut due = due_ns;
        let mut rounds = 0;
        loop {
            request_no = request_no.saturating_add(1);
            let tag = Tag {
                turn: request_no,
                tool: rounds > 0,
                ..Tag::default()
            };
            // Built before it is due, so building it is not counted as the schedule's lag.
            let prepared = prepare(shared, &conversation, turn.max_tokens, tag);
            // When the generator got to it: the pacer's wake-up, or now when it is due already.
            let mut dispatched_ns = shared.ctx.clock.now_ns();
            if due > dispatched_ns {
                match shared.alarms.at(due).await {
                    Ok(at) => dispatched_ns = at,
                    Err(_) => {
                        stopped = true;
                        turns_left += 1;
                        break;
                    }
                }
            }
            let seq = index << 16 | u64::from(request_no);
            let slot = Slot {
                index: seq,
                due_ns: due,
                dispatched_ns,
                keep_answer: true,
            };
            let Some((answer, done_ns)) = send(shared, &prepared, slot, measured).await else {
                progress.failed = true;
                break;
            };
            progress.answered += 1;
            progress.last_done_ns = done_ns;
            conversation.answered(&answer);
            if answer.calls.is_empty() {
                break;
            }
            if rounds >= turn.tool_rounds {
                unanswered = answer.calls;
                break;
            }
            conversation.tool_results(&answer.calls, turn.tool_result_tokens);
            rounds += 1;
            due = done_ns;
        }
        if stopped {
            break;
        }
        if progress.failed {
            break;
        }
    }
    if measured {
        let why = if progress.failed {
            NotSent::EarlierTurnFailed
        } else {
            NotSent::Stopped
        };
        let span = (start_ns, progress.last_done_ns);
        tally(shared, true, |t| {
            t.ended(progress.answered, span, progress.failed, (turns_left, why))
        });
    }
    !stopped
}

/// A session's next request, built ahead of its due time.
struct Prepared {
    request: crate::wire::target::RequestSpec,
    template: Template,
    tag: Tag,
}

/// Builds the next request of `conversation` (its body holds the history so far).
fn prepare(
    shared: &Shared,
    conversation: &Conversation,
    max_tokens: Option<u32>,
    mut tag: Tag,
) -> Prepared {
    let spec = &shared.ctx.spec;
    let body = conversation.body(max_tokens);
    tag.body_bytes = u32::try_from(body.len()).unwrap_or(u32::MAX);
    tag.prompt_tokens =
        serde_json::from_slice(&body).map_or(0, |b| crate::generator::corpus::prompt_tokens(&b));
    let mut request = spec.plan.request.clone();
    request.body = Bytes::from(body);
    let template = Template::new(&spec.plan, &spec.target, &spec.target.path, &request);
    Prepared {
        request,
        template,
        tag,
    }
}

/// Sends a prepared request of a session in its `slot`, and records it when `measured`;
/// the answer and when it ended, or `None` when it failed.
async fn send(
    shared: &Shared,
    prepared: &Prepared,
    slot: Slot,
    measured: bool,
) -> Option<(answer::Answer, u64)> {
    let ctx = &shared.ctx;
    let due_ns = slot.due_ns;
    let tag = prepared.tag;
    let unrecorded = measured.then_some(Unrecorded {
        recorder: &shared.recorder,
        clock: &ctx.clock,
        due_ns,
        tag,
    });
    let mut result = timed(
        ctx,
        &shared.pool,
        &prepared.template,
        &prepared.request,
        slot,
    )
    .await;
    std::mem::forget(unrecorded);
    let read = match &mut result {
        Ok(x) => match x.kept.as_mut().and_then(|k| {
            let read = answer::read(&std::mem::take(&mut k.answer), x.stream);
            k.cache = read.as_ref().and_then(|a| a.cache);
            read
        }) {
            Some(a) => Some((a, x.done_ns)),
            None => {
                result = Err(ErrorKind::Invalid);
                None
            }
        },
        Err(_) => None,
    };
    if measured {
        record(ctx, &shared.recorder, &mut result, due_ns, tag);
    } else if result.is_ok() {
        shared.recorder.borrow_mut().warmup += 1;
        ctx.spec.progress.ok.fetch_add(1, Relaxed);
    }
    read
}

/// Changes the worker's session tally, when `measured`.
fn tally(
    shared: &Shared,
    measured: bool,
    f: impl FnOnce(&mut crate::generator::sessions::record::SessionTally),
) {
    if !measured {
        return;
    }
    if let Some(t) = shared.recorder.borrow_mut().sessions.as_mut() {
        f(t);
    }
}

/// Counts a session that started in the warm-up (not recorded).
fn warmed(shared: &Shared, measured: bool) {
    if measured {
        return;
    }
    if let Some(t) = shared.recorder.borrow_mut().sessions.as_mut() {
        t.warmup += 1;
    }
}
