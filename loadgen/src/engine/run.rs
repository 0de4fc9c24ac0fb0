//! `loadgen run`: plan, start the workers, watch them, merge, judge, report.

use std::io::IsTerminal;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use gatebench_shared::host::{raise_open_file_limit, OpenFileLimit};

use crate::engine::embedded::EmbeddedMock;
use crate::generator::breakdown::{GroupSummary, StagePlan};
use crate::generator::pace::Pace;
use crate::generator::plan::{Load, Plan, PlanError};
use crate::generator::recorder::{Metric, Recorder};
use crate::generator::schedule::Arrival;
use crate::generator::worker::{run_worker, Progress, StartLine, WorkerSpec};
use crate::options::RunArgs;
use crate::results::run::{
    generator_reasons, reported, steady_throughput, GeneratorTiming, RateTarget, RunResult,
    Summary, TargetRun, Validity, SCHEMA,
};
use crate::wire::clock::RunClock;
use crate::wire::target::Target;

/// Exit codes, as documented in docs/loadgen-run.md.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
/// A run with a planned end stopped early by Ctrl-C or SIGTERM (its partial result is written).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A user error (exit 2), as opposed to a run that was judged (exit 0 or 1).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("{0}")]
    Other(String),
}

/// The demo's rate for whole answers.
const DEMO_RATE: f64 = 5_000.0;

/// The demo's rate for 16-token streams: each is 18 events for the generator to read, and at
/// 5,000 a second (90,000 events) one generator core on a 2-core machine falls behind its own
/// schedule (lag p99 4.5 ms), which makes the run invalid; 2,000 a second keeps it under 1 ms.
const DEMO_STREAM_RATE: f64 = 2_000.0;

/// Runs `loadgen run` and returns the result with the exit code it earns.
pub fn run(args: RunArgs, command: Vec<String>) -> anyhow::Result<(RunResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let args = crate::options::profile::run(args)?;
    let demo = args.targets.is_empty();
    let demo_rates = demo && args.rate.is_none() && args.concurrency.is_none();
    let open = |rate| {
        demo_rates.then_some(Load::Open {
            rate,
            arrival: Arrival::Constant,
        })
    };
    let mut plan = args
        .clone()
        .plan_at(open(DEMO_RATE))
        .map_err(SetupError::from)?;
    // Each phase: the plan with a scenario's requests, at the demo's own rate for it when no
    // load was asked for.
    let phases: Vec<Plan> = if demo && args.scenario.is_none() && args.body.is_none() {
        let streams = Plan {
            request: args
                .request(Some("chat-stream"))
                .map_err(SetupError::from)?,
            load: match plan.load {
                Load::Open { arrival, .. } if demo_rates => Load::Open {
                    rate: DEMO_STREAM_RATE,
                    arrival,
                },
                load => load,
            },
            ..plan.clone()
        };
        vec![plan.clone(), streams]
    } else {
        vec![plan.clone()]
    };
    check_together(&plan)?;
    let open_files = raise_open_file_limit().ok();
    check_open_files(&plan, open_files.as_ref())?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    let mock = if demo {
        // The mock gets the last core; the generator the others.
        let mock = EmbeddedMock::start(cores).map_err(|e| SetupError::Other(e.to_string()))?;
        plan.targets = vec![mock.target.clone()];
        if plan.pin.is_empty() && cores >= 2 {
            plan.pin = (0..cores - 1).collect();
        }
        Some(mock)
    } else {
        None
    };
    for target in &plan.targets {
        probe(target, plan.timeout)?;
    }
    if let Some(reference) = &plan.clock_ref {
        if crate::generator::clock_ref::measure(reference).is_none() {
            return Err(SetupError::Other(format!(
                "--clock-ref {}: no gatebench mock's clock answers at {}{}",
                reference.url,
                reference.resolved,
                crate::generator::clock_ref::CLOCK_PATH
            ))
            .into());
        }
    }
    // The embedded mock's configuration, or the first target's when it is a gatebench mock.
    let mock_config = match &mock {
        Some(m) => Some(m.config_toml.clone()),
        None => plan
            .targets
            .first()
            .and_then(crate::engine::disclose::mock_config),
    };
    let (runs, final_plan) = run_phases(&plan, phases);
    let valid = runs.iter().all(|r| r.validity.valid);
    let result = RunResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files),
        plan: (&final_plan).into(),
        mock: mock_config,
        runs,
        valid,
        shards: None,
    };
    drop(mock);
    let code = judge(&result, &plan);
    Ok((result, code))
}

/// Runs every target under every phase in turn (stopping early on Ctrl-C), each phase on the
/// plan's targets and cores; returns the runs and the plan to disclose.
fn run_phases(plan: &Plan, phases: Vec<Plan>) -> (Vec<TargetRun>, Plan) {
    let mut runs = Vec::new();
    let mut disclosed = plan.clone();
    let phases: Vec<Arc<Plan>> = phases
        .into_iter()
        .map(|phase| {
            Arc::new(Plan {
                targets: plan.targets.clone(),
                pin: plan.pin.clone(),
                ..phase
            })
        })
        .collect();
    for target in &plan.targets {
        for phase in &phases {
            if stop_requested() {
                return (runs, disclosed);
            }
            disclosed.request = phase.request.clone();
            runs.push(run_target(phase.clone(), target.clone()));
        }
    }
    (runs, disclosed)
}

/// A shard or a start instant needs one run (one target, one scenario: later runs could not
/// start together) and a start that is ahead, but not absurdly far.
fn check_together(plan: &Plan) -> Result<(), SetupError> {
    if plan.shard.count == 1 && plan.start_at.is_none() {
        return Ok(());
    }
    if plan.targets.len() != 1 {
        return Err(SetupError::Other(
            "--shard and --start-at take exactly one --target: processes on several hosts can \
             start one run together, not a sequence of runs"
                .into(),
        ));
    }
    if let Some(at) = plan.start_at {
        let now = std::time::SystemTime::now();
        if at < now {
            let ago = now.duration_since(at).unwrap_or_default();
            return Err(SetupError::Other(format!(
                "--start-at {} is {:.1} s in the past: the shards cannot start together; pick an \
                 instant far enough ahead for every shard to be running by then",
                crate::generator::start_at::format(at),
                ago.as_secs_f64()
            )));
        }
        if at.duration_since(now).unwrap_or_default() > crate::generator::start_at::MAX_AHEAD {
            return Err(SetupError::Other(format!(
                "--start-at {} is more than a day ahead",
                crate::generator::start_at::format(at)
            )));
        }
    }
    Ok(())
}

/// Refuses a target that cannot be reached at all before any load is sent (exit 2); failures
/// during the run are counted per request instead.
pub(crate) fn probe(target: &Target, timeout: Duration) -> Result<(), SetupError> {
    std::net::TcpStream::connect_timeout(&target.resolved, timeout.min(Duration::from_secs(5)))
        .map(drop)
        .map_err(|e| {
            SetupError::Other(format!(
                "cannot connect to target {} ({}): {e}",
                target.url, target.resolved
            ))
        })
}

/// Exit 1 when the run is invalid or a threshold failed, 130 when a run with a planned end was
/// interrupted; say why on stderr.
fn judge(result: &RunResult, plan: &Plan) -> u8 {
    let mut code = if result.valid { EXIT_OK } else { EXIT_FAILED };
    let planned = plan.duration.is_some() || plan.requests.is_some();
    if planned && (stop_requested() || result.runs.iter().any(|r| r.interrupted)) {
        gatebench_shared::say!(
            "loadgen: interrupted: the result holds what ran before the signal, marked \
             \"interrupted\"; requests still in flight after the grace are counted as cancelled"
        );
        return EXIT_INTERRUPTED;
    }
    for run in &result.runs {
        if let Some(max) = plan.max_error_rate {
            let rate = 1.0 - run.success_rate;
            if rate > max {
                gatebench_shared::say!(
                    "loadgen: {}: error rate {:.4} is over --max-error-rate {max}",
                    run.target.url,
                    rate
                );
                code = EXIT_FAILED;
            }
        }
        if let (Some(max), Some(s)) = (plan.max_p99, run.metrics.get("response_time")) {
            if s.p99 as u128 > max.as_micros() {
                gatebench_shared::say!(
                    "loadgen: {}: response-time p99 {} us is over --max-p99 {} us",
                    run.target.url,
                    s.p99,
                    max.as_micros()
                );
                code = EXIT_FAILED;
            }
        }
    }
    code
}

static STOP: OnceLock<Arc<Progress>> = OnceLock::new();

/// Descriptors kept free for everything but the connections (standard streams, the runtime,
/// files written, a probe of the target).
const SPARE_FILES: u64 = 64;

/// Refuses a plan whose connections need more descriptors than the limit allows, even raised.
pub(crate) fn check_open_files(
    plan: &Plan,
    files: Option<&OpenFileLimit>,
) -> Result<(), SetupError> {
    let connections = match plan.load {
        Load::Closed { concurrency } => concurrency.max(plan.connections),
        Load::Open { .. } => plan.connections,
    };
    check_connections(connections, files)
}

/// Refuses `connections` open at once when they need more descriptors than the limit allows.
pub(crate) fn check_connections(
    connections: usize,
    files: Option<&OpenFileLimit>,
) -> Result<(), SetupError> {
    let connections = connections as u64;
    match files {
        Some(files) if connections + SPARE_FILES > files.soft => Err(SetupError::Other(format!(
            "impossible plan: {connections} connections need about {} open files; the limit \
             here is {} even after raising it (ulimit -n; the hard limit is {})",
            connections + SPARE_FILES,
            files.soft,
            files.hard
        ))),
        _ => Ok(()),
    }
}

/// The process-wide stop flag, set by Ctrl-C or SIGTERM (watched from a thread started once);
/// a second signal sets `abandon`, to stop waiting for the requests in flight.
pub(crate) fn stop_flag() -> Arc<Progress> {
    STOP.get_or_init(|| {
        let progress = Arc::new(Progress::default());
        let flag = progress.clone();
        // The signals are registered before this returns, so one sent at any moment after is
        // a stop, never the default action.
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return progress;
        };
        let signals = {
            use tokio::signal::unix::{signal, SignalKind};
            let _entered = rt.enter();
            (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            )
        };
        let (Ok(mut int), Ok(mut term)) = signals else {
            return progress;
        };
        let _ = std::thread::Builder::new()
            .name("loadgen-signals".into())
            .spawn(move || {
                rt.block_on(async move {
                    for flag in [&flag.stop, &flag.abandon] {
                        tokio::select! {
                            _ = int.recv() => {}
                            _ = term.recv() => {}
                        }
                        flag.store(true, Relaxed);
                    }
                });
            });
        progress
    })
    .clone()
}

pub(crate) fn stop_requested() -> bool {
    STOP.get().is_some_and(|p| p.stop.load(Relaxed))
}

/// A run's measured window, as it passes: it opens when the warm-up is over and closes at the
/// planned end (or when the workers finish first, or the run is stopped). A profiler samples
/// exactly this window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    Opened,
    Closed,
}

/// Runs the plan's load against one target and summarises it.
pub(crate) fn run_target(plan: Arc<Plan>, target: Target) -> TargetRun {
    run_target_watched(plan, target, &mut |_| {})
}

/// [`run_target`], telling `watch` when the measured window opens and closes (within a
/// millisecond or so: the coordinator wakes at each boundary).
pub(crate) fn run_target_watched(
    plan: Arc<Plan>,
    target: Target,
    watch: &mut dyn FnMut(Window),
) -> TargetRun {
    let stop = stop_flag();
    let progress = Arc::new(Progress::default());
    let start = Arc::new(StartLine::new(plan.threads));
    let window_start_ns = plan.warmup.as_nanos() as u64;
    let end_ns = plan.duration.map(|d| window_start_ns + d.as_nanos() as u64);

    let seen_before = plan
        .upstream_metrics
        .as_ref()
        .and_then(crate::engine::upstream::requests_seen);
    if let Some(at) = plan.start_at {
        if !plan.quiet {
            let left = at.duration_since(std::time::SystemTime::now());
            gatebench_shared::say!(
                "loadgen: shard {} waits to start at {} (in {:.1} s)",
                plan.shard,
                crate::generator::start_at::format(at),
                left.unwrap_or_default().as_secs_f64()
            );
        }
        // Connections are opened just before the start: opened long ahead, they would idle.
        crate::generator::start_at::sleep_until_before(
            at,
            crate::generator::start_at::PREPARE,
            &stop.stop,
        );
    }
    let reference = plan
        .clock_ref
        .as_ref()
        .and_then(crate::generator::clock_ref::measure);
    let mut handles = Vec::new();
    for index in 0..plan.threads {
        let spec = WorkerSpec {
            index,
            plan: plan.clone(),
            target: target.clone(),
            start: start.clone(),
            window_start_ns,
            end_ns,
            progress: progress.clone(),
            core: (!plan.pin.is_empty()).then(|| plan.pin[index % plan.pin.len()]),
        };
        let handle = std::thread::Builder::new()
            .name(format!("loadgen-worker-{index}"))
            .spawn(move || run_worker(spec));
        match handle {
            Ok(h) => handles.push(h),
            Err(err) => {
                // The started workers wait for this one at the start line: nothing to salvage.
                gatebench_shared::say!("loadgen: cannot start worker thread {index}: {err}");
                std::process::exit(i32::from(EXIT_USAGE));
            }
        }
    }

    // Workers open their connections, then the clock starts a little ahead of the first slot.
    let (clock, started) = start.start(plan.start_at);
    let clock_facts = crate::generator::start_at::ClockFacts {
        start_at: plan.start_at.map(crate::generator::start_at::format),
        started_unix_us: crate::generator::start_at::unix_us(started),
        start_error_us: plan.start_at.map(|at| {
            crate::generator::start_at::unix_us(started) - crate::generator::start_at::unix_us(at)
        }),
        kernel: crate::generator::start_at::kernel_clock(),
        reference,
    };
    let live = !plan.quiet && std::io::stderr().is_terminal();
    let mut stopped_at_ns = None;
    let (mut opened, mut closed) = (false, false);
    while !handles.iter().all(|h| h.is_finished()) {
        let next = if !opened {
            Some(window_start_ns)
        } else {
            end_ns.filter(|_| !closed)
        };
        let nap = next.map_or(Duration::from_millis(100), |at| {
            Duration::from_nanos(at.saturating_sub(clock.now_ns())).min(Duration::from_millis(100))
        });
        std::thread::sleep(nap);
        if stop.stop.load(Relaxed) && stopped_at_ns.is_none() {
            progress.stop.store(true, Relaxed);
            stopped_at_ns = Some(clock.now_ns());
        }
        let now = clock.now_ns();
        if !opened && now >= window_start_ns {
            opened = true;
            watch(Window::Opened);
        }
        let ended = end_ns.is_some_and(|end| now >= end) || stopped_at_ns.is_some();
        if opened && !closed && ended {
            closed = true;
            watch(Window::Closed);
        }
        if stop.abandon.load(Relaxed) {
            progress.abandon.store(true, Relaxed);
        }
        if live {
            live_line(&clock, &progress, window_start_ns);
        }
    }
    if opened && !closed {
        watch(Window::Closed);
    }
    if live {
        gatebench_shared::say!();
    }

    let mut recorder =
        Recorder::logging(window_start_ns, &crate::generator::intervals::logged(&plan))
            .grouped(crate::generator::worker::breakdown(&plan));
    let (mut opened, mut reused, mut cpu_s) = (0, 0, 0.0);
    let mut dials = crate::wire::transport::Dials::default();
    let mut setup_errors = Vec::new();
    for handle in handles {
        match handle.join() {
            Ok(out) => {
                recorder.merge(out.recorder);
                opened += out.connections_opened;
                reused += out.connections_reused;
                dials.merge(&out.dials);
                cpu_s += out.cpu_s;
                setup_errors.extend(out.setup_error);
            }
            Err(_) => setup_errors.push("a worker panicked".into()),
        }
    }
    let mut run = summarise(
        &plan,
        target,
        recorder,
        opened,
        reused,
        stopped_at_ns,
        setup_errors,
    );
    run.clock = clock_facts;
    run.connect = crate::results::run::ConnectFacts::of(&plan.transport, run.target.tls, &dials);
    // The workers' whole lives: connection set-up, the run and the drain of the last responses.
    run.generator_cpu_cores = cpu_s / (clock.now_ns() as f64 / 1e9).max(1e-9);
    let seen_after = plan
        .upstream_metrics
        .as_ref()
        .and_then(crate::engine::upstream::requests_seen);
    if let (Some(before), Some(after)) = (seen_before, seen_after) {
        // Requests that never connected were never sent.
        let unsent: u64 = [
            "connect_refused",
            "connect_timeout",
            "connect_error",
            "tls_error",
        ]
        .iter()
        .filter_map(|k| run.errors.get(*k))
        .sum();
        let sent = (run.requests + run.warmup_requests).saturating_sub(unsent);
        let seen = after.saturating_sub(before);
        run.upstream = Some(crate::engine::upstream::UpstreamCheck {
            seen,
            sent,
            matches: seen == sent,
        });
    }
    run
}

fn live_line(clock: &RunClock, progress: &Progress, window_start_ns: u64) {
    let now = clock.now_ns();
    let phase = if now < window_start_ns {
        "warm-up"
    } else {
        "measuring"
    };
    eprint!(
        "\r{phase} {:>7.1}s  ok {:>9}  failed {:>7}   ",
        now as f64 / 1e9,
        progress.ok.load(Relaxed),
        progress.failed.load(Relaxed)
    );
}

fn summarise(
    plan: &Plan,
    target: Target,
    mut recorder: Recorder,
    opened: u64,
    reused: u64,
    stopped_at_ns: Option<u64>,
    setup_errors: Vec<String>,
) -> TargetRun {
    let window_start_ns = plan.warmup.as_nanos() as u64;
    let planned_s = plan.duration.map(|d| d.as_secs_f64());
    let stopped_s = stopped_at_ns.map(|ns| ns.saturating_sub(window_start_ns) as f64 / 1e9);
    let dispatched_s = recorder.last_dispatch_ns.saturating_sub(window_start_ns) as f64 / 1e9;
    let duration_s = match (planned_s, stopped_s) {
        (Some(p), Some(s)) => p.min(s),
        (Some(p), None) => p,
        (None, Some(s)) => s,
        (None, None) => dispatched_s,
    }
    .max(1e-9);
    // A generator that fell behind dispatched its last request after the window closed.
    let dispatch_window_s = duration_s.max(dispatched_s);
    let achieved_rate = recorder.dispatched as f64 / dispatch_window_s;
    // The window's requests ended over this span; a target that fell behind ends them late.
    let ended = recorder.ok + recorder.failed();
    let span_s = recorder.last_done_ns.saturating_sub(recorder.first_done_ns) as f64 / 1e9;
    // Endings per second between the first and the last (n endings span n − 1 gaps), the
    // successful share of them.
    let (throughput, completion_window_s) = if ended >= 2 && span_s > 0.0 {
        let rate = (ended - 1) as f64 / span_s;
        (rate * recorder.ok as f64 / ended as f64, span_s)
    } else {
        (recorder.ok as f64 / duration_s, duration_s)
    };
    let failed = recorder.failed();
    let requests = recorder.ok + failed;
    let mut metrics = std::collections::BTreeMap::new();
    for metric in reported(plan.request.stream) {
        metrics.insert(
            metric.name().to_string(),
            Summary::of(recorder.histogram(metric)),
        );
    }
    let mut reasons = setup_errors;
    // A shard's target is its share of the plan's rate.
    let poisson = matches!(
        plan.load,
        Load::Open {
            arrival: Arrival::Poisson,
            ..
        }
    );
    let rate_target = plan
        .shard_rate()
        .map(|rate| RateTarget::of(rate, poisson, duration_s));
    reasons.extend(generator_reasons(
        recorder.ok,
        achieved_rate,
        rate_target,
        GeneratorTiming {
            lag: Some(recorder.histogram(Metric::ScheduleLag)),
            send_delay: Some(recorder.histogram(Metric::SendDelay)),
        },
    ));
    let timeline = recorder.timeline_summary();
    let (classes, stages) = breakdown_summaries(plan, &recorder, duration_s);
    TargetRun {
        target,
        scenario: plan.request.scenario.clone(),
        stream: plan.request.stream,
        duration_s,
        warmup_requests: recorder.warmup,
        requests,
        ok: recorder.ok,
        failed,
        success_rate: if requests == 0 {
            0.0
        } else {
            recorder.ok as f64 / requests as f64
        },
        dispatched: recorder.dispatched,
        dispatch_window_s,
        achieved_rate,
        throughput,
        completion_window_s,
        errors: recorder.errors.iter().map(|(k, n)| (k.key(), *n)).collect(),
        connections_opened: opened,
        connections_reused: reused,
        connect: crate::results::run::ConnectFacts::default(),
        pinned_cores: plan.pin.clone(),
        generator_cpu_cores: 0.0,
        interrupted: stopped_at_ns.is_some(),
        histograms: reported(plan.request.stream)
            .map(|m| (m, recorder.histogram(m).clone()))
            .collect(),
        metrics,
        steady_throughput: steady_throughput(&timeline),
        timeline,
        per_second: recorder.take_logged(),
        clock: crate::generator::start_at::ClockFacts::default(),
        validity: Validity {
            valid: reasons.is_empty(),
            reasons,
        },
        upstream: None,
        classes,
        stages,
    }
}

/// The run's groups: per class (named by the corpus) and per stage (with its plan and the
/// rate it got over its measured part).
fn breakdown_summaries(
    plan: &Plan,
    recorder: &Recorder,
    duration_s: f64,
) -> (Vec<GroupSummary>, Vec<GroupSummary>) {
    let names = plan
        .corpus
        .as_ref()
        .map(|c| c.classes.clone())
        .unwrap_or_default();
    let classes = recorder
        .breakdown
        .classes
        .iter()
        .zip(&names)
        .map(|(group, name)| group.summary(if name.is_empty() { "(none)" } else { name }))
        .collect();
    let Pace::Stages(ramp) = &plan.pace else {
        return (classes, Vec::new());
    };
    let window = (
        plan.warmup.as_secs_f64(),
        plan.warmup.as_secs_f64() + duration_s,
    );
    let stages = recorder
        .breakdown
        .stages
        .iter()
        .zip(ramp.outline())
        .enumerate()
        .map(
            |(i, (group, (start_s, end_s, from_rate, to_rate, planned)))| {
                let measured_s = (end_s.min(window.1) - start_s.max(window.0)).max(0.0);
                let mut summary = group.summary(&(i + 1).to_string());
                summary.stage = Some(StagePlan {
                    start_s,
                    end_s,
                    from_rate,
                    to_rate,
                    planned_requests: planned,
                    achieved_rate: if measured_s > 0.0 {
                        summary.requests as f64 / measured_s
                    } else {
                        0.0
                    },
                });
                summary
            },
        )
        .collect();
    (classes, stages)
}
