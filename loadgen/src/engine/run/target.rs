//! Running one target under a plan: wait for a `--start-at`, start one worker thread per core,
//! start the clock, watch the workers, merge what they recorded and summarise it, with the
//! clock's facts, the connections' and the upstream's own count of requests.

use std::io::IsTerminal;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::SystemTime;

use super::exit::EXIT_USAGE;
use super::stop::stop_flag;
use super::summary::{summarise, Counts};
use super::watch::{Bounds, Coordinator, Window};
use crate::generator::plan::Plan;
use crate::generator::recorder::Recorder;
use crate::generator::start_at;
use crate::generator::worker::{run_worker, Progress, StartLine, WorkerOutput, WorkerSpec};
use crate::model::target::Target;
use crate::results::clock::{ClockFacts, ReferenceClock};
use crate::results::pacing::{AnswerPollReport, WakeReport};
use crate::results::run::{ConnectFacts, TargetRun};
use crate::wire::transport::Dials;
use gatebench_shared::wake::WakeMargin;

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
    let live = plan.live.as_ref().map(|registry| {
        registry.track(&target.url, &plan.request.scenario, &plan.shard.to_string())
    });
    let progress = Arc::new(Progress {
        live,
        ..Progress::default()
    });
    let start = Arc::new(StartLine::new(plan.threads));
    let bounds = Bounds::of(&plan);

    let seen_before = requests_seen(&plan);
    wait_for_start(&plan, &stop);
    let reference = plan
        .clock_ref
        .as_ref()
        .and_then(crate::generator::clock_ref::measure);
    let handles = start_workers(&plan, &target, &start, &progress, bounds);

    // Workers open their connections, then the clock starts a little ahead of the first slot.
    let (clock, started) = start.start(plan.start_at);
    let clock_facts = clock_facts(&plan, started, reference);
    let coordinator = Coordinator {
        clock: &clock,
        stop: &stop,
        progress: &progress,
        bounds,
        live: !plan.quiet && std::io::stderr().is_terminal(),
    };
    let stopped_at_ns = coordinator.watch(&handles, watch);

    let mut joined = join_workers(&plan, handles, bounds);
    let mut run = summarise(&plan, target, joined.recorder, joined.counts, stopped_at_ns);
    run.clock = clock_facts;
    run.connect = ConnectFacts::of(&plan.transport, run.target.tls, &joined.dials);
    // From the start line: the run and the drain of the last responses; what the workers spent
    // before it (opening connections, calibrating their pacers) is reported on its own.
    let lived_s = (clock.now_ns() as f64 / 1e9).max(1e-9);
    run.generator_cpu_cores = (joined.cpu_s - joined.setup_cpu_s).max(0.0) / lived_s;
    run.generator_setup_cpu_s = Some(joined.setup_cpu_s);
    let margins: Vec<_> = joined.pacers.iter().collect();
    run.pacer = WakeReport::merged(&margins);
    joined.answer_poll.polled_cores = joined.answer_poll.polled_s / lived_s;
    run.answer_poll = Some(joined.answer_poll);
    let seen_after = requests_seen(&plan);
    if let (Some(before), Some(after)) = (seen_before, seen_after) {
        run.upstream = Some(upstream_check(&run, before, after));
    }
    run
}

/// With `--start-at`, sleeps until just before it: connections are opened just before the
/// start, as opened long ahead they would idle.
fn wait_for_start(plan: &Plan, stop: &Progress) {
    let Some(at) = plan.start_at else {
        return;
    };
    if !plan.quiet {
        let left = at.duration_since(SystemTime::now());
        gatebench_shared::say!(
            "loadgen: shard {} waits to start at {} (in {:.1} s)",
            plan.shard,
            start_at::format(at),
            left.unwrap_or_default().as_secs_f64()
        );
    }
    start_at::sleep_until_before(at, start_at::PREPARE, &stop.stop);
}

/// Starts the plan's worker threads, each pinned to its core when the plan pins any.
fn start_workers(
    plan: &Arc<Plan>,
    target: &Target,
    start: &Arc<StartLine>,
    progress: &Arc<Progress>,
    bounds: Bounds,
) -> Vec<JoinHandle<WorkerOutput>> {
    let mut handles = Vec::new();
    for index in 0..plan.threads {
        let spec = WorkerSpec {
            index,
            plan: plan.clone(),
            target: target.clone(),
            start: start.clone(),
            window_start_ns: bounds.start_ns,
            end_ns: bounds.end_ns,
            progress: progress.clone(),
            core: (!plan.cores.is_empty()).then(|| plan.cores[index % plan.cores.len()]),
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
    handles
}

/// When the run's clock started, against `--start-at` and the reference clock.
fn clock_facts(plan: &Plan, started: SystemTime, reference: Option<ReferenceClock>) -> ClockFacts {
    ClockFacts {
        start_at: plan.start_at.map(start_at::format),
        started_unix_us: start_at::unix_us(started),
        start_error_us: plan
            .start_at
            .map(|at| start_at::unix_us(started) - start_at::unix_us(at)),
        kernel: start_at::kernel_clock(),
        reference,
    }
}

/// What the workers recorded and used, merged.
pub(super) struct Joined {
    pub(super) recorder: Recorder,
    pub(super) counts: Counts,
    dials: Dials,
    cpu_s: f64,
    setup_cpu_s: f64,
    pub(super) pacers: Vec<WakeMargin>,
    answer_poll: AnswerPollReport,
}

/// Waits for every worker and merges their outputs; a worker that panicked is a setup error.
fn join_workers(plan: &Plan, handles: Vec<JoinHandle<WorkerOutput>>, bounds: Bounds) -> Joined {
    merged(plan, bounds, handles.into_iter().map(|h| h.join().ok()))
}

/// The workers' outputs merged (`None`: a worker that panicked, a setup error).
pub(super) fn merged(
    plan: &Plan,
    bounds: Bounds,
    outputs: impl Iterator<Item = Option<WorkerOutput>>,
) -> Joined {
    let recorder = Recorder::logging(bounds.start_ns, &crate::generator::intervals::logged(plan))
        .grouped(crate::generator::worker::breakdown(plan));
    let mut joined = Joined {
        recorder,
        counts: Counts::default(),
        dials: Dials::default(),
        cpu_s: 0.0,
        setup_cpu_s: 0.0,
        pacers: Vec::new(),
        answer_poll: AnswerPollReport::default(),
    };
    for output in outputs {
        match output {
            Some(out) => {
                joined.recorder.merge(out.recorder);
                joined.counts.opened += out.connections_opened;
                joined.counts.reused += out.connections_reused;
                joined.dials.merge(&out.dials);
                joined.cpu_s += out.cpu_s;
                joined.setup_cpu_s += out.setup_cpu_s;
                joined.pacers.extend(out.pacer);
                joined.answer_poll.add(&out.answer_poll);
                joined.counts.setup_errors.extend(out.setup_error);
            }
            None => joined.counts.setup_errors.push("a worker panicked".into()),
        }
    }
    joined
}

/// The upstream's `/metrics` count of requests, with `--upstream-metrics`.
fn requests_seen(plan: &Plan) -> Option<u64> {
    plan.upstream_metrics
        .as_ref()
        .and_then(crate::engine::upstream::requests_seen)
}

/// The upstream's count of requests over the run, `after − before`, against those sent.
fn upstream_check(run: &TargetRun, before: u64, after: u64) -> crate::results::run::UpstreamCheck {
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
    crate::results::run::UpstreamCheck {
        seen,
        sent,
        matches: seen == sent,
    }
}
