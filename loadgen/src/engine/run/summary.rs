//! A run's summary from its merged recorder: the measured window's length, the rates achieved,
//! the throughput over the span its requests ended in, the metrics' percentiles, the reasons a
//! run is invalid, and its breakdowns by class and stage.

use std::collections::BTreeMap;

use crate::generator::plan::Plan;
use crate::generator::rate_curve::RateCurve;
use crate::generator::recorder::Recorder;
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::model::target::Target;
use crate::results::breakdown::{GroupSummary, StagePlan};
use crate::results::metric::Metric;
use crate::results::metric::{reported_by, Summary};
use crate::results::run::{steady_throughput, TargetRun};
use crate::results::validity::{generator_reasons, GeneratorTiming, RateTarget, Validity};

/// What the workers counted beside their recorders.
#[derive(Debug, Default)]
pub(super) struct Counts {
    pub(super) opened: u64,
    pub(super) reused: u64,
    /// Why workers could not run.
    pub(super) setup_errors: Vec<String>,
}

/// The measured window and the rate requests were dispatched at over it.
struct Window {
    /// The window's length: as planned, or up to the stop, or up to the last dispatch.
    duration_s: f64,
    /// The window, or longer when the generator dispatched its last request after it closed.
    dispatch_window_s: f64,
    achieved_rate: f64,
}

impl Window {
    fn of(plan: &Plan, recorder: &Recorder, stopped_at_ns: Option<u64>) -> Window {
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
        Window {
            duration_s,
            dispatch_window_s,
            achieved_rate: recorder.dispatched as f64 / dispatch_window_s,
        }
    }
}

/// Successful endings per second over the span the window's requests ended in, with that span
/// (s); a target that fell behind ends them late.
fn throughput(recorder: &Recorder, duration_s: f64) -> (f64, f64) {
    let ended = recorder.ok + recorder.failed();
    let span_s = recorder.last_done_ns.saturating_sub(recorder.first_done_ns) as f64 / 1e9;
    // Endings per second between the first and the last (n endings span n − 1 gaps), the
    // successful share of them.
    if ended >= 2 && span_s > 0.0 {
        let rate = (ended - 1) as f64 / span_s;
        (rate * recorder.ok as f64 / ended as f64, span_s)
    } else {
        (recorder.ok as f64 / duration_s, duration_s)
    }
}

/// Why the run is invalid: its workers' setup errors, then the generator's own (too slow, too
/// late against its schedule).
fn reasons(plan: &Plan, recorder: &Recorder, window: &Window, setup: Vec<String>) -> Vec<String> {
    let mut reasons = setup;
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
        .map(|rate| RateTarget::of(rate, poisson, window.duration_s));
    reasons.extend(generator_reasons(
        recorder.ok,
        window.achieved_rate,
        rate_target,
        GeneratorTiming {
            lag: Some(recorder.histogram(Metric::ScheduleLag)),
            send_delay: Some(recorder.histogram(Metric::SendDelay)),
            build: Some(recorder.histogram(Metric::BuildTime)),
        },
    ));
    reasons
}

/// The reported metrics' percentiles, by name.
fn metrics(plan: &Plan, recorder: &Recorder) -> BTreeMap<String, Summary> {
    reported_by(plan.request.stream, plan.sessions.is_some())
        .map(|metric| {
            (
                metric.name().to_string(),
                Summary::of(recorder.histogram(metric)),
            )
        })
        .collect()
}

/// Summarises one target's run; the clock's, the connections' and the upstream's facts and
/// the generator's CPU are the caller's to fill in.
pub(super) fn summarise(
    plan: &Plan,
    target: Target,
    mut recorder: Recorder,
    counts: Counts,
    stopped_at_ns: Option<u64>,
) -> TargetRun {
    let window = Window::of(plan, &recorder, stopped_at_ns);
    let duration_s = window.duration_s;
    let (throughput, completion_window_s) = throughput(&recorder, duration_s);
    let failed = recorder.failed();
    let requests = recorder.ok + failed;
    let metrics = metrics(plan, &recorder);
    let reasons = reasons(plan, &recorder, &window, counts.setup_errors);
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
        dispatch_window_s: window.dispatch_window_s,
        achieved_rate: window.achieved_rate,
        throughput,
        completion_window_s,
        errors: recorder.errors.iter().map(|(k, n)| (k.key(), *n)).collect(),
        connections_opened: counts.opened,
        connections_reused: counts.reused,
        connect: crate::results::run::ConnectFacts::default(),
        pinned_cores: plan.cores.clone(),
        generator_cpu_cores: 0.0,
        generator_setup_cpu_s: None,
        pacer: None,
        answer_poll: None,
        interrupted: stopped_at_ns.is_some(),
        histograms: reported_by(plan.request.stream, plan.sessions.is_some())
            .map(|m| (m, recorder.histogram(m).clone()))
            .collect(),
        metrics,
        steady_throughput: steady_throughput(&timeline),
        timeline,
        per_second: recorder.take_logged(),
        clock: crate::results::clock::ClockFacts::default(),
        validity: Validity {
            valid: reasons.is_empty(),
            reasons,
        },
        upstream: None,
        classes,
        stages,
        sessions: recorder.sessions.as_deref().map(super::sessions::result),
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
    let RateCurve::Stages(ramp) = &plan.pace else {
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
