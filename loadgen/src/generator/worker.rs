//! One worker: a thread with its own current-thread runtime, pinned on request, owning its
//! connections and every W-th slot of the schedule (open loop) or its share of the in-flight
//! requests (closed loop).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;
use tokio::task::LocalSet;

use crate::generator::breakdown::Breakdown;
use crate::generator::pace::Pace;
use crate::generator::pacer::Pacer;
use crate::generator::plan::{Load, Plan};
use crate::generator::recorder::Recorder;
use crate::generator::schedule::Schedule;
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http1::pool::Pool;
use crate::wire::outcome::Tag;
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::{RequestSpec, Target};
use crate::wire::transport::Dials;
use crate::wire::{http1, http2};

/// Counters every worker updates for the live progress line.
#[derive(Debug, Default)]
pub struct Progress {
    pub ok: AtomicU64,
    pub failed: AtomicU64,
    /// Set to stop sending (Ctrl-C, or the end of a `forever` run).
    pub stop: AtomicBool,
    /// Set to stop waiting for the requests in flight (a second Ctrl-C).
    pub abandon: AtomicBool,
}

/// What a worker gives back.
#[derive(Debug)]
pub struct WorkerOutput {
    pub recorder: Recorder,
    pub connections_opened: u64,
    pub connections_reused: u64,
    /// How long opening each connection took.
    pub dials: Dials,
    /// CPU time the worker thread used (user + system), in seconds.
    pub cpu_s: f64,
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
    let recorder = Rc::new(RefCell::new(
        Recorder::logging(
            spec.window_start_ns,
            &crate::generator::intervals::logged(&spec.plan),
        )
        .grouped(breakdown(&spec.plan)),
    ));
    let workers = spec.plan.threads;
    let cap = spec.plan.connections.div_ceil(workers).max(1);
    let client = Rc::new(Client::new(&spec.target, &spec.plan, cap));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let setup_error = match runtime {
        Ok(runtime) => {
            let local = LocalSet::new();
            let (rec, client2) = (recorder.clone(), client.clone());
            local.block_on(&runtime, drive(spec, rec, client2)).err()
        }
        Err(err) => {
            // Still take part in the start, or the other workers would wait forever.
            let _ = spec.start.ready();
            Some(format!("cannot build a runtime: {err}"))
        }
    };
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
        setup_error,
    }
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
        Pace::Stages(stages) => stages
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

async fn drive(
    spec: WorkerSpec,
    recorder: Rc<RefCell<Recorder>>,
    pool: Rc<Client>,
) -> Result<(), String> {
    // Connections are opened before the first slot, so no request pays for one.
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
    let clock = spec.start.ready();
    let requests = Requests::new(&spec.target, &spec.plan);
    let ctx = Rc::new(Running {
        spec,
        clock,
        requests,
    });
    let spec = &ctx.spec;
    let in_flight = Rc::new(InFlight::default());
    match spec.plan.load {
        Load::Open { rate, arrival } => {
            // This worker's part of `--max-pending`.
            let max_pending = spec.plan.max_pending.div_ceil(spec.plan.threads as u64) as usize;
            let pacer = Pacer::new(ctx.clock.clone(), spec.plan.spin)
                .map_err(|e| format!("timerfd: {e}"))?;
            let (first, stride) = spec
                .plan
                .shard
                .slots(spec.index as u64, spec.plan.threads as u64);
            let schedule = Schedule::paced(
                arrival,
                rate,
                spec.plan.seed,
                first,
                stride,
                &spec.plan.pace,
            );
            for (index, due_ns) in schedule {
                if spec.end_ns.is_some_and(|end| due_ns >= end) || spec.progress.stop.load(Relaxed)
                {
                    break;
                }
                pacer
                    .wait_until(due_ns)
                    .await
                    .map_err(|e| format!("timerfd: {e}"))?;
                let dispatched_ns = ctx.clock.now_ns();
                recorder.borrow_mut().dispatch(due_ns, dispatched_ns);
                if in_flight.count.get() >= max_pending {
                    // The target is not answering: count the request rather than hold it.
                    let tag = ctx.requests.of(index).tag;
                    recorder
                        .borrow_mut()
                        .failure(ErrorKind::Backlog, due_ns, dispatched_ns, tag);
                    spec.progress.failed.fetch_add(1, Relaxed);
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
                    one(&ctx, &recorder, &pool, index, due_ns, dispatched_ns).await;
                    in_flight.end();
                });
            }
        }
        Load::Closed { concurrency } => {
            let mine = share(concurrency, spec.index, spec.plan.threads);
            let next = Rc::new(Cell::new(0u64));
            // With --requests: this worker's share of the measured requests, and those sent.
            let budget = spec.plan.requests.map(|n| {
                let threads = spec.plan.threads as u64;
                n / threads + u64::from((spec.index as u64) < n % threads)
            });
            let measured = Rc::new(Cell::new(0u64));
            for _ in 0..mine {
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
                    let spec = &ctx.spec;
                    loop {
                        let now = ctx.clock.now_ns();
                        if spec.end_ns.is_some_and(|end| now >= end)
                            || spec.progress.stop.load(Relaxed)
                        {
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
                        one(&ctx, &recorder, &pool, index, now, now).await;
                    }
                    in_flight.end();
                });
            }
        }
    }
    // A closed loop's requests are sent from their own tasks: sending is over when its window
    // ends or a stop is asked (or when every loop has sent its share).
    if let Load::Closed { .. } = spec.plan.load {
        tokio::select! {
            _ = in_flight.wait_all() => return Ok(()),
            _ = sending_over(&ctx) => {}
        }
    }
    // Sending is over: what is in flight gets the grace (each request still bounded by its
    // timeout); what is left then is cancelled, and counted so, as its task is dropped.
    tokio::select! {
        _ = in_flight.wait_all() => {}
        _ = grace_over(spec.plan.grace) => {}
        _ = abandoned(&spec.progress) => {}
    }
    Ok(())
}

/// Resolves when the grace is over; never without one (each request ends by its timeout).
async fn grace_over(grace: Option<std::time::Duration>) {
    match grace {
        Some(grace) => tokio::time::sleep(grace).await,
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
        tokio::time::sleep(std::time::Duration::from_nanos(wait)).await;
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
}

/// A request ready to send: its bytes, what it is, and its tag for the breakdown.
#[derive(Debug)]
struct Sendable {
    template: Template,
    request: RequestSpec,
    tag: Tag,
}

/// What a worker sends: the plan's one request, or one of its corpus's per slot.
#[derive(Debug)]
struct Requests {
    sendables: Vec<Sendable>,
    corpus: Option<Arc<crate::generator::corpus::Corpus>>,
    seed: u64,
}

impl Requests {
    fn new(target: &Target, plan: &Plan) -> Requests {
        let sendables = match &plan.corpus {
            Some(corpus) => corpus
                .entries
                .iter()
                .map(|e| Sendable {
                    template: Template::new(
                        plan,
                        target,
                        e.path.as_deref().unwrap_or(&target.path),
                        &e.request,
                    ),
                    request: e.request.clone(),
                    tag: Tag {
                        class: e.class,
                        body_bytes: u32::try_from(e.request.body.len()).unwrap_or(u32::MAX),
                        prompt_tokens: e.prompt_tokens,
                    },
                })
                .collect(),
            None => vec![Sendable {
                template: Template::new(plan, target, &target.path, &plan.request),
                request: plan.request.clone(),
                tag: Tag {
                    class: 0,
                    body_bytes: u32::try_from(plan.request.body.len()).unwrap_or(u32::MAX),
                    prompt_tokens: serde_json::from_slice(&plan.request.body)
                        .map_or(0, |body| crate::generator::corpus::prompt_tokens(&body)),
                },
            }],
        };
        Requests {
            sendables,
            corpus: plan.corpus.clone(),
            seed: plan.seed,
        }
    }

    /// The request of slot `index`.
    fn of(&self, index: u64) -> &Sendable {
        match &self.corpus {
            Some(corpus) => &self.sendables[corpus.pick(index, self.seed)],
            None => &self.sendables[0],
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
) {
    let (spec, plan) = (&ctx.spec, &ctx.spec.plan);
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
    };
    let result = tokio::time::timeout(
        plan.timeout,
        pool.exchange(&sendable.template, &sendable.request, &ctx.clock, slot),
    )
    .await
    .unwrap_or(Err(ErrorKind::Timeout));
    std::mem::forget(unrecorded);
    let mut recorder = recorder.borrow_mut();
    match result {
        Ok(mut x) => {
            x.tag = sendable.tag;
            recorder.success(&x);
            spec.progress.ok.fetch_add(1, Relaxed);
        }
        Err(kind) => {
            recorder.failure(kind, due_ns, ctx.clock.now_ns(), sendable.tag);
            spec.progress.failed.fetch_add(1, Relaxed);
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

/// A worker's connections to its target, by HTTP version.
#[derive(Debug)]
enum Client {
    Http1(Pool),
    Http2(http2::Pool),
}

/// A request encoded for the run's HTTP version.
#[derive(Debug)]
enum Template {
    Http1(http1::RequestTemplate),
    Http2(http2::RequestTemplate),
}

impl Template {
    fn new(plan: &Plan, target: &Target, path: &str, request: &RequestSpec) -> Template {
        if plan.transport.http2 {
            Template::Http2(http2::RequestTemplate::post_to(target, path, request))
        } else {
            Template::Http1(http1::RequestTemplate::post_to(target, path, request))
        }
    }
}

impl Client {
    fn new(target: &Target, plan: &Plan, cap: usize) -> Client {
        let transport = plan.transport.clone();
        if transport.http2 {
            Client::Http2(http2::Pool::new(
                target.clone(),
                transport,
                cap,
                plan.timeout,
            ))
        } else {
            Client::Http1(Pool::new(target.clone(), transport, cap, plan.timeout))
        }
    }

    async fn preopen(&self, n: usize) -> Result<(), ErrorKind> {
        match self {
            Client::Http1(pool) => pool.preopen(n).await,
            Client::Http2(pool) => pool.preopen(n).await,
        }
    }

    async fn exchange(
        &self,
        template: &Template,
        request: &RequestSpec,
        clock: &RunClock,
        slot: Slot,
    ) -> Result<Exchange, ErrorKind> {
        match (self, template) {
            (Client::Http1(pool), Template::Http1(t)) => {
                http1::exchange(pool, t, request, clock, slot).await
            }
            (Client::Http2(pool), Template::Http2(t)) => {
                http2::exchange(pool, t, request, clock, slot).await
            }
            // Invariant: a worker's templates and client follow the same plan.
            _ => unreachable!("templates are encoded for the client's HTTP version"),
        }
    }

    /// The first TLS failure's reason, if a connection failed its handshake.
    fn tls_error(&self) -> Option<String> {
        match self {
            Client::Http1(pool) => pool.dials.borrow().tls_error.clone(),
            Client::Http2(pool) => pool.dials.borrow().tls_error.clone(),
        }
    }

    /// Connections opened, requests on a reused connection, and how long opening took.
    fn counts(&self) -> (u64, u64, Dials) {
        match self {
            Client::Http1(pool) => (pool.opened.get(), pool.reused.get(), pool.dials.take()),
            Client::Http2(pool) => (pool.opened.get(), pool.reused.get(), pool.dials.take()),
        }
    }
}
