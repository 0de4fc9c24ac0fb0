//! One worker: a thread with its own current-thread runtime, pinned on request, owning its
//! connections and every W-th slot of the schedule (open loop) or its share of the in-flight
//! requests (closed loop). Its connections by HTTP version are in `client`, the requests it
//! sends, encoded once, in `requests`, its polling for due answers in `answer_poll`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;
use tokio::task::LocalSet;

mod alarms;
mod answer_poll;
mod client;
mod conversation;
mod requests;
mod turns;

use gatebench_shared::wake::WakeMargin;

use crate::generator::breakdown::Breakdown;
use crate::generator::live::Live;
use crate::generator::pacer::{calibrated, Pacer};
use crate::generator::plan::Plan;
use crate::generator::rate_curve::RateCurve;
use crate::generator::recorder::Recorder;
use crate::generator::schedule::Schedule;
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::model::target::Target;
use crate::results::pacing::AnswerPollReport;
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::outcome::{ErrorKind, Tag};
use crate::wire::timeouts::Timers;
use crate::wire::transport::Dials;
use answer_poll::AnswerPoll;
use client::{Client, Template};
use requests::Requests;

/// Counters every worker updates for the live progress line.
#[derive(Debug, Default)]
pub struct Progress {
    pub ok: AtomicU64,
    pub failed: AtomicU64,
    /// Set to stop sending (Ctrl-C, or the end of a `forever` run).
    pub stop: AtomicBool,
    /// Set to stop waiting for the requests in flight (a second Ctrl-C).
    pub abandon: AtomicBool,
    /// The counters a metrics endpoint serves, when the run has one (`--metrics-listen`).
    pub live: Option<Arc<Live>>,
}

/// What a worker gives back.
#[derive(Debug)]
pub struct WorkerOutput {
    pub recorder: Recorder,
    pub connections_opened: u64,
    pub connections_reused: u64,
    /// How long opening each connection took.
    pub dials: Dials,
    /// CPU time the worker thread used (user + system), in seconds, in all.
    pub cpu_s: f64,
    /// Of which before the start line: opening connections and calibrating the pacer.
    pub setup_cpu_s: f64,
    /// The pacer's margin and what it saw (`None`: a closed loop, or no run).
    pub pacer: Option<WakeMargin>,
    /// How the worker polled for due answers.
    pub answer_poll: AnswerPollReport,
    /// Why the worker could not run, if it could not.
    pub setup_error: Option<String>,
}

/// Everything one worker needs.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    pub index: usize,
    pub plan: Arc<Plan>,
    pub target: Target,
    /// The run's clock, set once every worker has opened its connections.
    pub start: Arc<StartLine>,
    /// Start of the measured window (end of warm-up), ns from the start of the run.
    pub window_start_ns: u64,
    /// End of sending, ns from the start of the run; `None` runs until `progress.stop`.
    pub end_ns: Option<u64>,
    pub progress: Arc<Progress>,
    pub core: Option<usize>,
}

/// Runs a worker on the current thread until its share of the load is done.
pub fn run_worker(spec: WorkerSpec) -> WorkerOutput {
    if let Some(id) = spec.core {
        core_affinity::set_for_current(core_affinity::CoreId { id });
    }
    let recorder = new_recorder(&spec);
    let workers = spec.plan.threads;
    let cap = spec.plan.connections.div_ceil(workers).max(1);
    let client = Rc::new(Client::new(&spec.target, &spec.plan, cap));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let (accounts, setup_error) = match runtime {
        Ok(runtime) => {
            let local = LocalSet::new();
            let (rec, client2) = (recorder.clone(), client.clone());
            match local.block_on(&runtime, drive(spec, rec, client2)) {
                Ok(accounts) => (accounts, None),
                Err(err) => (Accounts::default(), Some(err)),
            }
        }
        Err(err) => {
            // Still take part in the start, or the other workers would wait forever.
            let _ = spec.start.ready();
            (
                Accounts::default(),
                Some(format!("cannot build a runtime: {err}")),
            )
        }
    };
    output(recorder, &client, accounts, setup_error)
}

/// Runs a worker against a simulated target on the simulated time `clock` reads, from the run's
/// zero: no start line, no calibration, the pacer starting at its starting margin (50 µs with
/// `--spin auto`). Await it inside
/// [`gatebench_shared::sim::SimTime::run`] on a local set.
#[cfg(test)]
pub(crate) async fn simulate(
    spec: WorkerSpec,
    clock: RunClock,
    model: crate::wire::simulated::SimulatedTarget,
) -> WorkerOutput {
    let recorder = new_recorder(&spec);
    let client = Rc::new(Client::Simulated(model));
    let margin = WakeMargin::new(spec.plan.spin);
    let running = Running::new(spec, clock, 0.0);
    let (accounts, setup_error) = match sending(running, Some(margin), &recorder, &client).await {
        Ok(accounts) => (accounts, None),
        Err(err) => (Accounts::default(), Some(err)),
    };
    output(recorder, &client, accounts, setup_error)
}

/// A worker's recorder, for its plan's metrics, intervals and groups.
fn new_recorder(spec: &WorkerSpec) -> Rc<RefCell<Recorder>> {
    let mut recorder = Recorder::logging(
        spec.window_start_ns,
        &crate::generator::intervals::logged(&spec.plan),
    )
    .grouped(breakdown(&spec.plan))
    .live(spec.progress.live.clone());
    if spec.plan.sessions.is_some() {
        recorder = recorder.with_sessions();
    }
    Rc::new(RefCell::new(recorder))
}

/// What a worker gives back once its tasks are over.
fn output(
    recorder: Rc<RefCell<Recorder>>,
    client: &Client,
    accounts: Accounts,
    setup_error: Option<String>,
) -> WorkerOutput {
    let recorder = Rc::try_unwrap(recorder)
        .map(RefCell::into_inner)
        .unwrap_or_else(|rc| std::mem::replace(&mut rc.borrow_mut(), Recorder::new(0)));
    let (connections_opened, connections_reused, dials) = client.counts();
    WorkerOutput {
        recorder,
        connections_opened,
        connections_reused,
        dials,
        cpu_s: thread_cpu_s(),
        setup_cpu_s: accounts.setup_cpu_s,
        pacer: accounts.pacer,
        answer_poll: accounts.answer_poll,
        setup_error,
    }
}

/// One request of the plan's (its first) to `target`, alone, as the run's workers send it (its
/// HTTP version, TLS and pinned address), on a connection opened first: how long the exchange
/// took from its send (ns), or why it failed. Needs a current-thread runtime and a local set.
pub(crate) async fn probe(target: &Target, plan: &Plan) -> Result<u64, ErrorKind> {
    let client = Client::new(target, plan, 1);
    // A refused connection fails the exchange below, and says so.
    let _ = client.preopen(1).await;
    let requests = Requests::new(target, plan);
    let sendable = requests.of(0);
    let clock = RunClock::starting_in(Duration::ZERO);
    let now = clock.now_ns();
    let slot = Slot {
        index: 0,
        due_ns: now,
        dispatched_ns: now,
        keep_answer: false,
        lane: None,
    };
    let exchange = client.exchange(&sendable.template, &sendable.request, &clock, slot);
    let x = clock
        .timeout(plan.timeout, exchange)
        .await
        .unwrap_or(Err(ErrorKind::Timeout))?;
    Ok(x.done_ns.saturating_sub(x.sent_ns))
}

/// What a worker's waits cost and saw: its pacer's and its answer poller's accounts.
#[derive(Debug, Default)]
struct Accounts {
    setup_cpu_s: f64,
    pacer: Option<WakeMargin>,
    answer_poll: AnswerPollReport,
}

/// The groups a plan's results are broken down by: its corpus's classes (when its lines name
/// some) and its stages.
pub fn breakdown(plan: &Plan) -> Breakdown {
    let classes = plan
        .corpus
        .as_ref()
        .filter(|c| c.has_classes())
        .map_or(0, |c| c.classes.len());
    let stage_ends_ns = match &plan.pace {
        RateCurve::Stages(stages) => stages
            .outline()
            .map(|(_, end_s, ..)| (end_s * 1e9).round() as u64)
            .collect(),
        _ => Vec::new(),
    };
    Breakdown::new(classes, stage_ends_ns)
}

/// CPU time of the calling thread so far (user + system), in seconds.
fn thread_cpu_s() -> f64 {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass, which lives for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Where workers wait for each other: the clock starts only once every worker has opened its
/// connections, so no request pays for a connection opened ahead (or is late because of one).
#[derive(Debug)]
pub struct StartLine {
    ready: Barrier,
    go: Barrier,
    clock: OnceLock<RunClock>,
}

impl StartLine {
    pub fn new(workers: usize) -> StartLine {
        StartLine {
            ready: Barrier::new(workers + 1),
            go: Barrier::new(workers + 1),
            clock: OnceLock::new(),
        }
    }

    /// Called by the coordinator: waits for every worker, then starts the clock at `at` by the
    /// wall clock (at once if that has passed), or a moment from now. Returns the clock and the
    /// wall-clock time of its zero.
    pub fn start(&self, at: Option<SystemTime>) -> (RunClock, SystemTime) {
        self.ready.wait();
        let now = SystemTime::now();
        let lead = match at {
            Some(at) => at.duration_since(now).unwrap_or(Duration::ZERO),
            None => Duration::from_millis(10),
        };
        let clock = self
            .clock
            .get_or_init(|| RunClock::starting_in(lead))
            .clone();
        self.go.wait();
        (clock, now + lead)
    }

    /// Called by a worker once ready; returns the run's clock.
    pub fn ready(&self) -> RunClock {
        self.ready.wait();
        self.go.wait();
        // Invariant: the coordinator sets the clock between the two barriers.
        self.clock.get().expect("clock set before go").clone()
    }
}

/// Runs the worker's share of the load: opens its connections, waits at the start line, sends
/// on schedule (open loop) or from its loops (closed loop), then drains what is in flight.
async fn drive(
    spec: WorkerSpec,
    recorder: Rc<RefCell<Recorder>>,
    pool: Rc<Client>,
) -> Result<Accounts, String> {
    let (running, margin) = prepare(spec, &pool).await?;
    sending(running, margin, &recorder, &pool).await
}

/// From the start line on: sends the worker's share, then drains what is in flight.
async fn sending(
    running: Running,
    margin: Option<WakeMargin>,
    recorder: &Rc<RefCell<Recorder>>,
    pool: &Rc<Client>,
) -> Result<Accounts, String> {
    let ctx = Rc::new(running);
    let spec = &ctx.spec;
    let poller = ctx.clone();
    // The poller runs until the worker's tasks are dropped (should its timerfd fail, it stops,
    // and the worker sleeps on epoll between answers as it would with --poll-budget 0).
    tokio::task::spawn_local(async move { poller.poll.run().await });
    let in_flight = Rc::new(InFlight::default());
    let mut pacer = None;
    match spec.plan.load {
        Load::Open { rate, arrival } => {
            let margin = margin.unwrap_or_else(|| WakeMargin::new(spec.plan.spin));
            let load = (rate, arrival);
            pacer = Some(if spec.plan.sessions.is_some() {
                conversation::send_sessions(&ctx, recorder, pool, &in_flight, load, margin).await?
            } else {
                send_open(&ctx, recorder, pool, &in_flight, load, margin).await?
            });
        }
        Load::Closed { concurrency } => {
            start_closed(&ctx, recorder, pool, &in_flight, concurrency);
            // A closed loop's requests are sent from their own tasks: sending is over when its
            // window ends or a stop is asked (or when every loop has sent its share).
            tokio::select! {
                biased;
                _ = in_flight.wait_all() => {}
                _ = sending_over(&ctx) => {}
            }
        }
    }
    // Sending is over: what is in flight gets the grace (each request still bounded by its
    // timeout); what is left then is cancelled, and counted so, as its task is dropped.
    tokio::select! {
        biased;
        _ = in_flight.wait_all() => {}
        _ = grace_over(&ctx.clock, spec.plan.grace) => {}
        _ = abandoned(&spec.progress) => {}
    }
    Ok(Accounts {
        setup_cpu_s: ctx.setup_cpu_s,
        pacer,
        answer_poll: ctx.poll.report(),
    })
}

/// Opens the worker's connections before the first slot, so no request pays for one, measures
/// its timer (open loop: the pacer's margin, calibrated), then waits at the start line for the
/// run's clock.
async fn prepare(spec: WorkerSpec, pool: &Client) -> Result<(Running, Option<WakeMargin>), String> {
    let preopen = match spec.plan.load {
        Load::Open { .. } => spec.plan.connections.div_ceil(spec.plan.threads),
        Load::Closed { concurrency } => share(concurrency, spec.index, spec.plan.threads),
    };
    // A target that refuses connections is reported per request, not as a setup error.
    let _ = pool.preopen(preopen).await;
    if let Some(why) = pool.tls_error() {
        // Every request would fail the same way: say why once, before any load.
        let _ = spec.start.ready();
        return Err(format!("TLS with {} failed: {why}", spec.target.url));
    }
    // Blocking here is fine: nothing else on this thread has work until the run starts.
    let margin = match spec.plan.load {
        Load::Open { .. } => match calibrated(spec.plan.spin) {
            Ok(margin) => Some(margin),
            Err(err) => {
                let _ = spec.start.ready();
                return Err(format!("timerfd: {err}"));
            }
        },
        Load::Closed { .. } => None,
    };
    let setup_cpu_s = thread_cpu_s();
    let clock = spec.start.ready();
    Ok((Running::new(spec, clock, setup_cpu_s), margin))
}

/// Whether sending is over at `now_ns`: the window has ended or a stop was asked.
#[inline]
fn past_sending(spec: &WorkerSpec, now_ns: u64) -> bool {
    spec.end_ns.is_some_and(|end| now_ns >= end) || spec.progress.stop.load(Relaxed)
}

/// This worker's pacer, waking `margin` before each send, and its slots of the run's schedule
/// (the first and the stride): what an open loop of requests and one of sessions both start
/// from.
fn pacer_and_slots(ctx: &Running, margin: WakeMargin) -> Result<(Pacer, u64, u64), String> {
    let spec = &ctx.spec;
    let pacer = Pacer::new(ctx.clock.clone(), margin).map_err(|e| format!("timerfd: {e}"))?;
    let (first, stride) = spec
        .plan
        .shard
        .slots(spec.index as u64, spec.plan.threads as u64);
    Ok((pacer, first, stride))
}

/// The open loop: sends each of this worker's slots at its due time, each in its own task,
/// until the window ends or a stop is asked; paced with `margin`, returned with what it saw.
async fn send_open(
    ctx: &Rc<Running>,
    recorder: &Rc<RefCell<Recorder>>,
    pool: &Rc<Client>,
    in_flight: &Rc<InFlight>,
    (rate, arrival): (f64, Arrival),
    margin: WakeMargin,
) -> Result<WakeMargin, String> {
    let spec = &ctx.spec;
    // This worker's part of `--max-pending`.
    let max_pending = spec.plan.max_pending.div_ceil(spec.plan.threads as u64) as usize;
    let (pacer, first, stride) = pacer_and_slots(ctx, margin)?;
    let schedule = Schedule::paced(
        arrival,
        rate,
        spec.plan.seed,
        first,
        stride,
        &spec.plan.pace,
    );
    for (index, due_ns) in schedule {
        if past_sending(spec, due_ns) {
            break;
        }
        pacer
            .wait_until(due_ns)
            .await
            .map_err(|e| format!("timerfd: {e}"))?;
        let dispatched_ns = ctx.clock.now_ns();
        recorder.borrow_mut().dispatch(due_ns, dispatched_ns);
        if in_flight.count.get() >= max_pending {
            backlog(ctx, recorder, index, due_ns, dispatched_ns);
            continue;
        }
        in_flight.start();
        let (ctx, recorder, pool, in_flight) = (
            ctx.clone(),
            recorder.clone(),
            pool.clone(),
            in_flight.clone(),
        );
        tokio::task::spawn_local(async move {
            one(&ctx, &recorder, &pool, index, due_ns, dispatched_ns, None).await;
            in_flight.end();
        });
    }
    Ok(pacer.into_margin())
}

/// The target is not answering: counts the request of slot `index` rather than hold it.
#[inline]
fn backlog(ctx: &Running, recorder: &RefCell<Recorder>, index: u64, due_ns: u64, at_ns: u64) {
    let tag = ctx.requests.of(index).tag;
    recorder
        .borrow_mut()
        .failure(ErrorKind::Backlog, due_ns, at_ns, tag);
    ctx.spec.progress.failed.fetch_add(1, Relaxed);
}

/// The closed loop: starts this worker's share of the `concurrency` loops, each in its task.
fn start_closed(
    ctx: &Rc<Running>,
    recorder: &Rc<RefCell<Recorder>>,
    pool: &Rc<Client>,
    in_flight: &Rc<InFlight>,
    concurrency: usize,
) {
    let spec = &ctx.spec;
    let mine = share(concurrency, spec.index, spec.plan.threads);
    let next = Rc::new(Cell::new(0u64));
    // With --requests: this worker's share of the measured requests, and those sent.
    let budget = spec.plan.requests.map(|n| {
        let threads = spec.plan.threads as u64;
        n / threads + u64::from((spec.index as u64) < n % threads)
    });
    let measured = Rc::new(Cell::new(0u64));
    for lane in 0..mine {
        in_flight.start();
        let (ctx, recorder, pool, in_flight, next, measured) = (
            ctx.clone(),
            recorder.clone(),
            pool.clone(),
            in_flight.clone(),
            next.clone(),
            measured.clone(),
        );
        tokio::task::spawn_local(async move {
            closed_loop(&ctx, &recorder, &pool, lane, &next, &measured, budget).await;
            in_flight.end();
        });
    }
}

/// One closed loop, the worker's `lane`th: sends a request as soon as the last one ended,
/// until the window ends, a stop is asked or the worker's measured `budget` is sent; `next` and
/// `measured` are shared by the worker's loops.
async fn closed_loop(
    ctx: &Running,
    recorder: &RefCell<Recorder>,
    pool: &Client,
    lane: usize,
    next: &Cell<u64>,
    measured: &Cell<u64>,
    budget: Option<u64>,
) {
    let spec = &ctx.spec;
    loop {
        let now = ctx.clock.now_ns();
        if past_sending(spec, now) {
            break;
        }
        if now >= spec.window_start_ns {
            if budget.is_some_and(|b| measured.get() >= b) {
                break;
            }
            measured.set(measured.get() + 1);
        }
        let k = next.get();
        next.set(k + 1);
        let index = k * spec.plan.threads as u64 + spec.index as u64;
        recorder.borrow_mut().dispatch(now, now);
        one(ctx, recorder, pool, index, now, now, Some(lane)).await;
    }
}

/// Resolves when the grace is over; never without one (each request ends by its timeout).
async fn grace_over(clock: &RunClock, grace: Option<std::time::Duration>) {
    match grace {
        Some(grace) => clock.sleep(grace).await,
        None => std::future::pending().await,
    }
}

/// Resolves at the end of the sending window, or when a stop is asked.
async fn sending_over(ctx: &Running) {
    let spec = &ctx.spec;
    while !spec.progress.stop.load(Relaxed) {
        let wait = match spec.end_ns {
            Some(end) => {
                let now = ctx.clock.now_ns();
                if now >= end {
                    return;
                }
                (end - now).min(50_000_000)
            }
            None => 50_000_000,
        };
        ctx.clock.sleep(std::time::Duration::from_nanos(wait)).await;
    }
}

/// Resolves once a second Ctrl-C asks to stop waiting.
async fn abandoned(progress: &Progress) {
    while !progress.abandon.load(Relaxed) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Counts a request as cancelled if its task is dropped before it was recorded.
struct Unrecorded<'a> {
    recorder: &'a RefCell<Recorder>,
    clock: &'a RunClock,
    due_ns: u64,
    tag: Tag,
}

impl Drop for Unrecorded<'_> {
    fn drop(&mut self) {
        // Dropped with the worker's tasks, after the worker returned: nothing else holds the
        // recorder then.
        if let Ok(mut recorder) = self.recorder.try_borrow_mut() {
            recorder.failure(
                ErrorKind::Cancelled,
                self.due_ns,
                self.clock.now_ns(),
                self.tag,
            );
        }
    }
}

/// This worker's part of `total`, spread as evenly as possible.
fn share(total: usize, index: usize, workers: usize) -> usize {
    total / workers + usize::from(index < total % workers)
}

/// A worker's spec and the run's clock, once the run has started.
#[derive(Debug)]
struct Running {
    spec: WorkerSpec,
    clock: RunClock,
    requests: Requests,
    poll: AnswerPoll,
    /// The request timeout's timers, kept between requests.
    timers: Timers,
    /// The thread's CPU before the start line, in seconds.
    setup_cpu_s: f64,
}

impl Running {
    fn new(spec: WorkerSpec, clock: RunClock, setup_cpu_s: f64) -> Running {
        let requests = Requests::new(&spec.target, &spec.plan);
        let budget = spec.plan.poll_budget / spec.plan.threads as f64;
        let poll = AnswerPoll::new(clock.clone(), budget);
        Running {
            spec,
            clock,
            requests,
            poll,
            timers: Timers::new(),
            setup_cpu_s,
        }
    }
}

/// Runs one exchange under the request timeout and records it.
async fn one(
    ctx: &Running,
    recorder: &RefCell<Recorder>,
    pool: &Client,
    index: u64,
    due_ns: u64,
    dispatched_ns: u64,
    lane: Option<usize>,
) {
    let sendable = ctx.requests.of(index);
    let unrecorded = Unrecorded {
        recorder,
        clock: &ctx.clock,
        due_ns,
        tag: sendable.tag,
    };
    let slot = Slot {
        index,
        due_ns,
        dispatched_ns,
        keep_answer: false,
        lane,
    };
    let mut result = timed(ctx, pool, &sendable.template, &sendable.request, slot).await;
    std::mem::forget(unrecorded);
    record(ctx, recorder, &mut result, due_ns, sendable.tag);
}

/// Runs one exchange under the request timeout, telling the answer poller when it was sent and
/// how long it took.
async fn timed(
    ctx: &Running,
    pool: &Client,
    template: &Template,
    request: &crate::wire::target::RequestSpec,
    slot: Slot,
) -> Result<crate::wire::outcome::Exchange, ErrorKind> {
    let awaited = ctx.poll.sent(slot.dispatched_ns);
    // Pinned here, so the timeout holds a pointer to it, not a copy.
    let exchange = std::pin::pin!(pool.exchange(template, request, &ctx.clock, slot));
    // The timeout counts from the dispatch, whose reading is at hand.
    let result = ctx
        .timers
        .within(
            &ctx.clock,
            slot.dispatched_ns,
            ctx.spec.plan.timeout,
            exchange,
        )
        .await
        .unwrap_or(Err(ErrorKind::Timeout));
    drop(awaited);
    if let Ok(x) = &result {
        let first = x.first_byte_ns.unwrap_or(x.done_ns);
        ctx.poll.answered(
            first.saturating_sub(slot.dispatched_ns),
            x.done_ns.saturating_sub(slot.dispatched_ns),
        );
    }
    result
}

/// Records an exchange's outcome, the request having carried `tag`.
fn record(
    ctx: &Running,
    recorder: &RefCell<Recorder>,
    result: &mut Result<crate::wire::outcome::Exchange, ErrorKind>,
    due_ns: u64,
    tag: Tag,
) {
    let progress = &ctx.spec.progress;
    let mut recorder = recorder.borrow_mut();
    match result {
        Ok(x) => {
            x.tag = tag;
            recorder.success(x);
            progress.ok.fetch_add(1, Relaxed);
        }
        Err(kind) => {
            recorder.failure(*kind, due_ns, ctx.clock.now_ns(), tag);
            progress.failed.fetch_add(1, Relaxed);
        }
    }
}

/// Requests in flight, to wait for the last of them.
#[derive(Debug, Default)]
struct InFlight {
    count: Cell<usize>,
    idle: Notify,
}

impl InFlight {
    fn start(&self) {
        self.count.set(self.count.get() + 1);
    }

    fn end(&self) {
        self.count.set(self.count.get() - 1);
        if self.count.get() == 0 {
            self.idle.notify_one();
        }
    }

    async fn wait_all(&self) {
        while self.count.get() > 0 {
            self.idle.notified().await;
        }
    }
}
