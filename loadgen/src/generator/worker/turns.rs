//! One session's turns, sent in order: every turn's body built from the answers so far before
//! it is due, its tool rounds sent at once, and its branches (sub-agents) run beside the
//! session's own turns from the turn they fork off to the turn that joins them.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::alarms::Alarms;
use super::client::{Client, Template};
use super::{record, timed, Running, Unrecorded};
use crate::generator::recorder::Recorder;
use crate::generator::sessions::answer::{self, Answer, ToolCall};
use crate::generator::sessions::body::Conversation;
use crate::generator::sessions::plan::SessionPlan;
use crate::generator::sessions::tally::{NotSent, SessionTally};
use crate::generator::sessions::{Branch, Session, Turn};
use crate::wire::exchange::Slot;
use crate::wire::outcome::{Build, ErrorKind, Tag};

/// What every session task of a worker shares.
pub(super) struct Shared {
    pub(super) ctx: Rc<Running>,
    pub(super) recorder: Rc<RefCell<Recorder>>,
    pub(super) pool: Rc<Client>,
    pub(super) plan: Arc<SessionPlan>,
    pub(super) alarms: Alarms,
    pub(super) active: Cell<usize>,
}

/// When a session's turns are due.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pace {
    /// The end of the previous turn plus the think time.
    Think,
    /// A user's cadence: one turn every `gap_ns`, the next at `next_ns`.
    Gap { gap_ns: u64, next_ns: u64 },
}

impl Pace {
    /// The due time of a turn after one that ended at `last_done_ns`, thinking `think_us`;
    /// moves a user's cadence on.
    pub(super) fn next_due(&mut self, last_done_ns: u64, think_us: u64) -> u64 {
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

/// How a line of a session went (its own turns, or a branch's).
#[derive(Debug, Default)]
struct Progress {
    /// Requests answered, tool rounds too.
    answered: u64,
    last_done_ns: u64,
    /// Spent in this line's own tool rounds: from the answer that called the tools to the
    /// answer to their results.
    tool_ns: u64,
    failed: bool,
    stopped: bool,
    /// Turns never sent.
    left: u64,
}

impl Progress {
    /// Adds how a branch went. Its tool rounds ran beside this line's time, not in it: they
    /// stay the branch's.
    fn add(&mut self, other: &Progress) {
        self.answered += other.answered;
        self.last_done_ns = self.last_done_ns.max(other.last_done_ns);
        self.failed |= other.failed;
        self.stopped |= other.stopped;
        self.left += other.left;
    }
}

/// What a session's lines share: its index, the numbers of its requests (`x-gatebench-seq`),
/// and whether one line failed, so the others send no more.
struct Run {
    index: u64,
    measured: bool,
    seq: Cell<u16>,
    halted: Cell<bool>,
}

impl Run {
    fn next_seq(&self) -> u64 {
        let n = self.seq.get().saturating_add(1);
        self.seq.set(n);
        self.index << 16 | u64::from(n)
    }
}

/// One line of a session's talk: its conversation, its requests so far, and what its last
/// turn left.
struct Talk {
    conversation: Conversation,
    /// Requests sent: the next one's turn number (a branch counts its own from 1).
    sent: u16,
    branch: bool,
    /// Calls of the last answer whose rounds were spent: their results go first next turn.
    unanswered: Vec<ToolCall>,
    /// The last user message and answer: what a join carries of a branch.
    last: Option<(String, Answer)>,
}

impl Talk {
    fn new(shared: &Shared, session: &Session, branch: bool) -> Talk {
        let plan = &shared.plan;
        let base = &shared.ctx.spec.plan.request.body;
        Talk {
            conversation: Conversation::new(plan.shape, base, session, plan.salt.as_deref()),
            sent: 0,
            branch,
            unanswered: Vec::new(),
            last: None,
        }
    }

    /// Opens turn `turn`: the results the last turn's calls still lack, the exchanges of the
    /// branches joining here, then the user's message.
    fn open(&mut self, turn: &Turn, joined: &[(String, Answer)]) {
        if !self.unanswered.is_empty() {
            self.conversation
                .tool_results(&self.unanswered, turn.tool_result_tokens);
            self.unanswered.clear();
        }
        for (user, answer) in joined {
            self.conversation.user(user);
            self.conversation.answered(answer);
        }
        self.conversation.user(&turn.user);
    }
}

/// A running branch: the turn it joins, and its task (how it went, and its last exchange).
type Fork = (usize, tokio::task::JoinHandle<BranchEnd>);

/// How a branch went, and its last user message and answer (`None` when it did not end well).
type BranchEnd = (Progress, Option<(String, Answer)>);

/// Runs session `index` (of the set, cycled) from `start_ns`; records it when `measured`.
/// Returns false when the run stopped under it.
pub(super) async fn run_session(
    shared: &Rc<Shared>,
    index: u64,
    start_ns: u64,
    pace: &mut Pace,
    measured: bool,
) -> bool {
    let plan = shared.plan.clone();
    let set = &plan.set.sessions;
    let session = &set[(index % set.len() as u64) as usize];
    let run = Rc::new(Run {
        index,
        measured,
        seq: Cell::new(0),
        halted: Cell::new(false),
    });
    // The line's first request is built from when its task began.
    let begun_ns = shared.ctx.clock.now_ns();
    let mut talk = Talk::new(shared, session, false);
    let mut progress = Progress {
        last_done_ns: start_ns,
        ..Progress::default()
    };
    let mut forks: Vec<Fork> = Vec::new();
    let mut next_branch = 0;
    for (k, turn) in session.turns.iter().enumerate() {
        let think_us = plan.think_us(shared.ctx.spec.plan.seed, index, k, turn.think_us);
        let mut due_ns = match (k, *pace) {
            (0, Pace::Think) => start_ns + think_us * 1_000,
            (0, Pace::Gap { .. }) => start_ns,
            _ => pace.next_due(progress.last_done_ns, think_us),
        };
        let (joined, ended) = join(&mut forks, k).await;
        progress.add(&ended);
        if progress.failed || progress.stopped || run.halted.get() {
            progress.left += (session.turns.len() - k) as u64;
            break;
        }
        // A join turn goes once its branches have answered, and counts from then.
        due_ns = due_ns.max(ended.last_done_ns);
        let from_ns = match k {
            0 => begun_ns,
            _ => progress.last_done_ns.max(ended.last_done_ns),
        };
        talk.open(turn, &joined);
        let times = (from_ns, due_ns);
        one_turn(shared, &run, &mut talk, turn, times, &mut progress).await;
        if progress.failed || progress.stopped {
            run.halted.set(true);
            progress.left += (session.turns.len() - k - 1) as u64;
            break;
        }
        while let Some(branch) = session.branches.get(next_branch).filter(|b| b.after <= k) {
            let fork_ns = progress.last_done_ns;
            let task = run_branch(shared.clone(), run.clone(), next_branch, fork_ns);
            forks.push((branch.join, tokio::task::spawn_local(task)));
            next_branch += 1;
            tally(shared, measured, |t| t.branches += 1);
        }
    }
    // Branches still running end on their own (the session halted) and are counted; those
    // never started are turns not sent.
    let (_, ended) = join(&mut forks, usize::MAX).await;
    progress.add(&ended);
    let unstarted: usize = session.branches[next_branch.min(session.branches.len())..]
        .iter()
        .map(|b| b.turns.len())
        .sum();
    progress.left += unstarted as u64;
    if measured {
        let why = if progress.failed {
            NotSent::EarlierTurnFailed
        } else {
            NotSent::Stopped
        };
        let span = (start_ns, progress.last_done_ns, progress.tool_ns);
        tally(shared, true, |t| {
            t.ended(
                progress.answered,
                span,
                progress.failed,
                (progress.left, why),
            )
        });
    }
    !progress.stopped
}

/// Waits for the branches that join turn `k` (or every branch, for `usize::MAX`): their last
/// exchanges in order, and how they went.
async fn join(forks: &mut Vec<Fork>, k: usize) -> (Vec<(String, Answer)>, Progress) {
    let mut joined = Vec::new();
    let mut ended = Progress::default();
    let mut i = 0;
    while i < forks.len() {
        if forks[i].0 > k && k != usize::MAX {
            i += 1;
            continue;
        }
        let (_, handle) = forks.remove(i);
        match handle.await {
            Ok((progress, last)) => {
                ended.add(&progress);
                joined.extend(last);
            }
            // A branch task that panicked: its session failed.
            Err(_) => ended.failed = true,
        }
    }
    (joined, ended)
}

/// Branch `b` of run `run`'s session from `fork_ns` (when the turn it forks off was answered):
/// its own turns back to back, each after its own think time (a sub-agent does not wait for
/// `--think`, which models a person), until they end or the session halts.
async fn run_branch(shared: Rc<Shared>, run: Rc<Run>, b: usize, fork_ns: u64) -> BranchEnd {
    let plan = shared.plan.clone();
    let set = &plan.set.sessions;
    let session = &set[(run.index % set.len() as u64) as usize];
    let branch: &Branch = &session.branches[b];
    let own = Session {
        id: format!("{}/branch-{b}", session.id),
        preamble: branch.preamble.clone(),
        tools: session.tools.clone(),
        model: session.model.clone(),
        turns: Vec::new(),
        branches: Vec::new(),
    };
    let begun_ns = shared.ctx.clock.now_ns();
    let mut talk = Talk::new(&shared, &own, true);
    let mut progress = Progress {
        last_done_ns: fork_ns,
        ..Progress::default()
    };
    for (k, turn) in branch.turns.iter().enumerate() {
        if run.halted.get() {
            progress.left += (branch.turns.len() - k) as u64;
            break;
        }
        let due_ns = progress.last_done_ns + turn.think_us.unwrap_or(0) * 1_000;
        let from_ns = match k {
            0 => begun_ns,
            _ => progress.last_done_ns,
        };
        talk.open(turn, &[]);
        let times = (from_ns, due_ns);
        one_turn(&shared, &run, &mut talk, turn, times, &mut progress).await;
        if progress.failed || progress.stopped {
            run.halted.set(true);
            progress.left += (branch.turns.len() - k - 1) as u64;
            break;
        }
    }
    let last = (!progress.failed && !progress.stopped)
        .then(|| talk.last.take())
        .flatten();
    (progress, last)
}

/// Sends turn `turn` of `talk`, its building begun at `from_ns` and due at `due_ns`, and its
/// tool rounds (each due, and its building begun, when the answer before it ended, and sent
/// once built, when that answer holds calls and rounds are left); moves `progress` on.
async fn one_turn(
    shared: &Shared,
    run: &Run,
    talk: &mut Talk,
    turn: &Turn,
    (from_ns, due_ns): (u64, u64),
    progress: &mut Progress,
) {
    let (mut from, mut due) = (from_ns, due_ns);
    let mut rounds = 0;
    loop {
        talk.sent = talk.sent.saturating_add(1);
        let tag = Tag {
            turn: talk.sent,
            tool: rounds > 0,
            branch: talk.branch,
            ..Tag::default()
        };
        // Built as soon as it can be: before it is due, or, due at once, as fast as it can.
        let mut prepared = prepare(shared, &mut talk.conversation, turn.max_tokens, tag);
        let ready_ns = shared.ctx.clock.now_ns();
        prepared.build = Build {
            from_ns: from.min(ready_ns),
            ready_ns,
        };
        // When the generator got to it: the pacer's wake-up, or now when it is due already.
        let mut dispatched_ns = ready_ns;
        if due > dispatched_ns {
            match shared.alarms.at(due).await {
                Ok(at) => dispatched_ns = at,
                Err(_) => {
                    progress.stopped = true;
                    progress.left += 1;
                    return;
                }
            }
        }
        let slot = Slot {
            index: run.next_seq(),
            due_ns: due,
            dispatched_ns,
            keep_answer: true,
            lane: None,
        };
        let Some((answer, done_ns)) = send(shared, &prepared, slot, run.measured).await else {
            progress.failed = true;
            return;
        };
        progress.answered += 1;
        if rounds > 0 {
            progress.tool_ns += done_ns.saturating_sub(due);
        }
        progress.last_done_ns = done_ns;
        talk.conversation.answered(&answer);
        if answer.calls.is_empty() {
            talk.last = Some((turn.user.clone(), answer));
            return;
        }
        if rounds >= turn.tool_rounds {
            // What a join carries is the answer's text: calls without results are not sent.
            let text = if answer.text.is_empty() {
                "[no text]".to_string()
            } else {
                answer.text.clone()
            };
            talk.unanswered = answer.calls;
            talk.last = Some((
                turn.user.clone(),
                Answer {
                    text,
                    ..Answer::default()
                },
            ));
            return;
        }
        talk.conversation
            .tool_results(&answer.calls, turn.tool_result_tokens);
        rounds += 1;
        (from, due) = (done_ns, done_ns);
    }
}

/// A session's next request, built ahead of its due time.
struct Prepared {
    request: crate::wire::target::RequestSpec,
    template: Template,
    tag: Tag,
    build: Build,
}

/// Builds the next request of `conversation` (its body holds the history so far).
fn prepare(
    shared: &Shared,
    conversation: &mut Conversation,
    max_tokens: Option<u32>,
    mut tag: Tag,
) -> Prepared {
    let spec = &shared.ctx.spec;
    let body = conversation.body(max_tokens);
    tag.body_bytes = u32::try_from(body.bytes.len()).unwrap_or(u32::MAX);
    tag.prompt_tokens = body.prompt_tokens;
    let mut request = spec.plan.request.clone();
    request.body = body.bytes;
    let template = Template::new(&spec.plan, &spec.target, &spec.target.path, &request);
    Prepared {
        request,
        template,
        tag,
        build: Build::default(),
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
    if let Ok(x) = &mut result {
        x.build = Some(prepared.build);
    }
    let read = match &mut result {
        Ok(x) => match x.kept.as_mut().and_then(|k| {
            let read = answer::read_kept(k, x.stream);
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
pub(super) fn tally(shared: &Shared, measured: bool, f: impl FnOnce(&mut SessionTally)) {
    if !measured {
        return;
    }
    if let Some(t) = shared.recorder.borrow_mut().sessions.as_mut() {
        f(t);
    }
}

/// Counts a session that started in the warm-up (not recorded).
pub(super) fn warmed(shared: &Shared, measured: bool) {
    if measured {
        return;
    }
    if let Some(t) = shared.recorder.borrow_mut().sessions.as_mut() {
        t.warmup += 1;
    }
}
