//! `loadgen ladder`: N streams opened at one instant, direct and through each gateway, for each
//! N of a ladder (default 10, 100, 250, 500, 1,000); per level and target: how many completed,
//! failures by reason, TTFT and end-to-end (median, p95), and whether the gateway passed the
//! stream through as the upstream sent it, re-chunked it, or buffered it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use gatebench_shared::duration::format_us;
use gatebench_shared::host::raise_open_file_limit;
use gatebench_shared::stats::{median, quantile_of_sorted};

use super::command::{over_preset, table};
use super::{written, Command};
use crate::engine::comparison::{named, settle, stand_in_targets};
use crate::engine::gateways::reach;
use crate::engine::run::{stop_requested, SetupError, EXIT_FAILED, EXIT_OK};
use crate::engine::sampler::sample_specs;
use crate::engine::sampler::Sampling;
use crate::generator::plan::Plan;
use crate::generator::plan_error::PlanError;
use crate::model::target::Named;
use crate::model::target::Target;
use crate::options::{LadderArgs, SettleFlag, LADDER_LEVELS as DEFAULT_LEVELS};
use crate::results::comparison::ComparisonFooter;
use crate::results::ladder::{LadderResult, Rung, SCHEMA};
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http1::exchange;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::RequestTemplate;
use crate::wire::outcome::{ErrorKind, Exchange};

pub(crate) fn parse_levels(text: &str) -> Result<Vec<usize>, PlanError> {
    crate::generator::plan::parse_counts(text, "counts like 10,100,250,500,1000")
}

/// A validated `loadgen ladder`, made once from its options (flags over the preset): what it
/// runs, and what `--print-config` prints.
#[derive(Debug)]
pub struct LadderPlan {
    /// The options as merged (the scenario defaults to `chat-stream`).
    pub args: LadderArgs,
    /// The levels as given (or the default), and parsed.
    pub levels_text: String,
    pub levels: Vec<usize>,
    pub targets: Vec<Named>,
    pub settle: Duration,
    pub samples: Vec<crate::engine::sampler::SampleSpec>,
    /// The requests and timeouts of every rung.
    pub plan: Plan,
}

impl LadderPlan {
    /// Checks `args` (with its preset under it) without sending anything.
    pub fn new(args: LadderArgs) -> anyhow::Result<LadderPlan> {
        let mut args = args.merged()?;
        let levels_text = args.levels.clone().unwrap_or_else(|| DEFAULT_LEVELS.into());
        let request = &mut args.load.request;
        if request.scenario.is_none() && request.body.is_none() {
            request.scenario = Some("chat-stream".into());
        }
        let levels = parse_levels(&levels_text).map_err(SetupError::from)?;
        let settle = settle(args.pause.settle.as_deref(), Duration::from_secs(1))?;
        let samples = sample_specs(&args.targets.sample)?;
        let targets = named(&args.targets, &args.load, "ladder")?;
        let plan = args.load.clone().plan().map_err(SetupError::from)?;
        refuse(&plan)?;
        Ok(LadderPlan {
            args,
            levels_text,
            levels,
            targets,
            settle,
            samples,
            plan,
        })
    }
}

/// Refuses a plan a ladder cannot climb: HTTP/2, or requests that do not stream.
fn refuse(plan: &Plan) -> Result<(), SetupError> {
    if plan.transport.http2 {
        return Err(SetupError::Other(
            "ladder opens one connection per stream and speaks HTTP/1.1 (over TLS for \
             https://); --http2 is for run, compare, sweep and capacity"
                .into(),
        ));
    }
    if !plan.request.stream {
        return Err(SetupError::Other(
            "ladder measures streams: use --scenario chat-stream or a body with \"stream\": true"
                .into(),
        ));
    }
    Ok(())
}

impl Command for LadderArgs {
    type Plan = LadderPlan;

    fn merged(self) -> anyhow::Result<LadderArgs> {
        let path = self.load.preset.clone();
        over_preset(self, path.as_deref())
    }

    fn stand_ins(mut self) -> LadderArgs {
        stand_in_targets(&mut self.targets);
        self
    }

    fn plan(self) -> anyhow::Result<LadderPlan> {
        LadderPlan::new(self)
    }

    fn execute(plan: LadderPlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = execute(plan, command_line)?;
        let report = crate::report::ladder::terminal(&result);
        written(&result, result.plan.out.as_deref(), &report, code)
    }

    fn preset(p: &LadderPlan) -> anyhow::Result<toml::Table> {
        let mut preset = table(&LadderArgs {
            levels: Some(p.levels_text.clone()),
            targets: p.args.targets.clone(),
            pause: SettleFlag {
                settle: Some(format_us(p.settle.as_micros() as u64)),
            },
            load: p.args.load.resolved(&p.plan),
        });
        // A ladder has no rate: each level is N streams at once.
        for key in ["rate", "arrival"] {
            preset.remove(key);
        }
        Ok(preset)
    }

    fn describe(p: &LadderPlan) -> String {
        format!(
            "ladder: {} level(s) of simultaneous streams",
            p.levels.len()
        )
    }
}

/// Runs `loadgen ladder` and returns the result with the exit code it earns.
pub fn run_ladder(args: LadderArgs, command: Vec<String>) -> anyhow::Result<(LadderResult, u8)> {
    execute(LadderPlan::new(args)?, command)
}

/// Runs `plan` and returns the result with the exit code it earns.
fn execute(plan: LadderPlan, command: Vec<String>) -> anyhow::Result<(LadderResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let LadderPlan {
        levels,
        targets,
        settle,
        samples,
        plan,
        ..
    } = plan;
    let open_files = raise_open_file_limit().ok();
    let most = levels.iter().copied().max().unwrap_or(0);
    crate::engine::run::check_connections(most, open_files.as_ref())?;
    let mock = reach(&targets, plan.timeout)?;
    if let Some(core) = plan.cores.first() {
        core_affinity::set_for_current(core_affinity::CoreId { id: *core });
    }
    let sampling = Sampling::start(samples);
    let mut rungs = climb_levels(&levels, &targets, &plan, settle)?;
    let resources = sampling.finish();
    judge_delivery(&mut rungs);
    let invalid = ladder_invalid_reasons(&rungs);
    let footer = ComparisonFooter::new(resources, invalid, stop_requested(), "level");
    let valid = footer.valid;
    let result = LadderResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files),
        plan: (&plan).into(),
        targets,
        mock,
        settle_us: settle.as_micros() as u64,
        rungs,
        footer,
    };
    Ok((result, if valid { EXIT_OK } else { EXIT_FAILED }))
}

/// Every level's streams at each target in turn, the order rotating from level to level so no
/// target always goes first; stops between targets when asked to.
fn climb_levels(
    levels: &[usize],
    targets: &[Named],
    plan: &Plan,
    settle: std::time::Duration,
) -> Result<Vec<Rung>, SetupError> {
    let mut rungs = Vec::new();
    for (i, &level) in levels.iter().enumerate() {
        let order = (0..targets.len()).map(|k| &targets[(i + k) % targets.len()]);
        for t in order {
            if stop_requested() {
                return Ok(rungs);
            }
            if !plan.quiet {
                gatebench_shared::say!("loadgen ladder: {level} streams, {}", t.name);
            }
            let calls = climb(&t.target, plan, level).map_err(SetupError::Other)?;
            rungs.push(rung(level, &t.name, calls));
            crate::engine::comparison::pause(settle);
        }
    }
    Ok(rungs)
}

/// Why the ladder's figures cannot be trusted: a direct rung that failed streams (the
/// baseline did not hold).
fn ladder_invalid_reasons(rungs: &[Rung]) -> Vec<String> {
    rungs
        .iter()
        .filter(|r| r.name.is_direct() && r.failed > 0)
        .map(|r| {
            format!(
                "the direct target failed {} of {} streams at level {}: the baseline did not hold",
                r.failed, r.level, r.level
            )
        })
        .collect()
}

/// What one level's streams gave: each stream's exchange or failure, and the send window.
struct Climb {
    results: Vec<Result<Exchange, ErrorKind>>,
    send_window_ns: u64,
    connections_opened: u64,
}

/// Opens `n` connections, then starts `n` streams at one instant and waits for all of them.
fn climb(target: &Target, plan: &Plan, n: usize) -> Result<Climb, String> {
    let (request, timeout) = (&plan.request, plan.timeout);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    Ok(local.block_on(&runtime, async move {
        let pool = Rc::new(
            Http1Pool::new(target.clone(), plan.transport.clone(), n, timeout).reusing_any_idle(),
        );
        // Connections that cannot be opened now are tried again by each stream, and their
        // failures counted there.
        let _ = pool.preopen(n).await;
        let template = Rc::new(RequestTemplate::post(target, request));
        let request = Rc::new(request.clone());
        let clock = RunClock::starting_in(Duration::ZERO);
        let results = Rc::new(RefCell::new(Vec::with_capacity(n)));
        let sent = Rc::new(RefCell::new(0u64));
        let mut tasks = Vec::with_capacity(n);
        for i in 0..n {
            let (pool, template, request, clock, results, sent) = (
                pool.clone(),
                template.clone(),
                request.clone(),
                clock.clone(),
                results.clone(),
                sent.clone(),
            );
            tasks.push(tokio::task::spawn_local(async move {
                let slot = Slot {
                    index: i as u64,
                    due_ns: 0,
                    dispatched_ns: 0,
                    keep_answer: false,
                    lane: None,
                };
                let x = tokio::time::timeout(
                    timeout,
                    exchange(&pool, &template, &request, &clock, slot),
                )
                .await
                .unwrap_or(Err(ErrorKind::Timeout));
                if let Ok(x) = &x {
                    let mut last = sent.borrow_mut();
                    *last = (*last).max(x.sent_ns);
                }
                results.borrow_mut().push(x);
            }));
        }
        for task in tasks {
            let _ = task.await;
        }
        let send_window_ns = *sent.borrow();
        let results = std::mem::take(&mut *results.borrow_mut());
        Climb {
            results,
            send_window_ns,
            connections_opened: pool.opened.get(),
        }
    }))
}

fn rung(level: usize, name: &crate::model::role::Role, climb: Climb) -> Rung {
    let mut errors = BTreeMap::new();
    let mut ttft = Vec::new();
    let mut e2e = Vec::new();
    let mut chunks = Vec::new();
    let mut spread = Vec::new();
    for result in &climb.results {
        match result {
            Ok(x) => {
                ttft.push(x.first_output_ns.unwrap_or(x.done_ns) as f64 / 1e3);
                e2e.push(x.done_ns as f64 / 1e3);
                chunks.push(x.output_events);
                spread.push(x.output_gaps_ns.iter().sum::<u64>() as f64 / 1e3);
            }
            Err(kind) => *errors.entry(kind.key()).or_default() += 1,
        }
    }
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let (ttft, e2e) = (sorted(ttft), sorted(e2e));
    let q = |v: &[f64], p| quantile_of_sorted(v, p).unwrap_or(f64::NAN);
    let chunk_values: Vec<f64> = chunks.iter().map(|&c| c as f64).collect();
    Rung {
        level,
        name: name.clone(),
        completed: e2e.len(),
        failed: climb.results.len() - e2e.len(),
        errors,
        ttft_p50_us: q(&ttft, 0.5),
        ttft_p95_us: q(&ttft, 0.95),
        e2e_p50_us: q(&e2e, 0.5),
        e2e_p95_us: q(&e2e, 0.95),
        chunks_p50: median(&chunk_values).unwrap_or(f64::NAN),
        chunks_min: chunks.iter().copied().min().unwrap_or(0),
        chunks_max: chunks.iter().copied().max().unwrap_or(0),
        spread_p50_us: median(&spread).unwrap_or(f64::NAN),
        delivery: "-".into(),
        send_window_us: climb.send_window_ns as f64 / 1e3,
        connections_opened: climb.connections_opened,
    }
}

/// Marks each gateway rung against the direct rung of its level: fewer output events per
/// stream means re-chunked (merged); output that arrives all at once where direct's was spread
/// out means buffered.
fn judge_delivery(rungs: &mut [Rung]) {
    let direct: BTreeMap<usize, (f64, f64)> = rungs
        .iter()
        .filter(|r| r.name.is_direct())
        .map(|r| (r.level, (r.chunks_p50, r.spread_p50_us)))
        .collect();
    for r in rungs.iter_mut().filter(|r| !r.name.is_direct()) {
        let Some(&(chunks, spread)) = direct.get(&r.level) else {
            continue;
        };
        r.delivery = if r.completed == 0 {
            "no stream completed".into()
        } else if spread > 1_000.0 && r.spread_p50_us < spread / 10.0 {
            "buffered".into()
        } else if (r.chunks_p50 - chunks).abs() >= 1.0 {
            "re-chunked".into()
        } else {
            "passed through".into()
        };
    }
}
