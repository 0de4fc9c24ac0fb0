//! `loadgen capacity`: the highest rate each target sustains within an SLO. Every step is a
//! fixed-length open-loop run at one rate, judged against the objectives; the search brackets
//! and narrows (`search`) until the answer lies between two rates within the precision. The
//! direct upstream is searched first; each gateway is searched under the direct's answer, so a
//! gateway's failure is never the upstream's: above the direct's capacity the baseline itself
//! fails.

use std::time::Duration;

use super::command::{over_preset, table};
use super::{written, Command};
use crate::engine::comparison::named;
use crate::engine::gateways::reach;
use crate::engine::run::{stop_requested, SetupError, EXIT_FAILED, EXIT_OK};
use crate::generator::plan::Plan;
use crate::generator::plan_error::PlanError;
use crate::generator::quantity::parse_rate;
use crate::model::load::Load;
use crate::model::target::Named;
use crate::options::preset::PLACEHOLDER;
use crate::options::{CapacityArgs, DEFAULT_MAX_RUNS, DEFAULT_PRECISION};
use crate::results::run::TargetRun;

mod backlog;
pub mod search;
pub mod slo;
mod stepper;

use crate::results::capacity::Bracket;
use crate::results::capacity::{CapacityResult, Step, TargetSearch, SCHEMA};
use crate::results::capacity::{Judged, Slo};
use search::{Next, Search};
use stepper::{Live, Stepper};

/// A validated `loadgen capacity`.
#[derive(Debug)]
pub struct CapacityPlan {
    pub targets: Vec<Named>,
    pub slo: Slo,
    pub start_rate: f64,
    pub max_rate: f64,
    pub precision: f64,
    pub max_runs: usize,
    pub confirm: usize,
    /// Each run's load, but for its rate.
    pub plan: Plan,
    /// The targets' and load's options as merged (the preset under the flags).
    pub args: CapacityArgs,
}

impl CapacityPlan {
    /// Checks `args` (with its preset under it) without sending anything.
    pub fn new(args: CapacityArgs) -> anyhow::Result<CapacityPlan> {
        let args = args.merged()?;
        let slo = args.slo.as_deref().ok_or_else(|| {
            SetupError::Other(
                "capacity needs --slo, the objectives a rate must meet, like p99<50ms,errors<1%"
                    .into(),
            )
        })?;
        let slo = Slo::parse(slo).map_err(SetupError::from)?;
        let bounds = Bounds::of(&args)?;
        let targets = targets(&args)?;
        let plan = args.load.clone().plan().map_err(SetupError::from)?;
        if plan.duration.is_none() || !matches!(plan.load, Load::Open { .. }) {
            return Err(SetupError::Other(
                "capacity runs each rate open-loop for a fixed --duration (not forever, not \
                 --concurrency)"
                    .into(),
            )
            .into());
        }
        if bounds.start_rate > bounds.max_rate {
            return Err(SetupError::Other(format!(
                "--start-rate {} is above --max-rate {}",
                bounds.start_rate, bounds.max_rate
            ))
            .into());
        }
        Ok(CapacityPlan {
            targets,
            slo,
            start_rate: bounds.start_rate,
            max_rate: bounds.max_rate,
            precision: bounds.precision,
            max_runs: bounds.max_runs,
            confirm: bounds.confirm,
            plan,
            args,
        })
    }
}

/// The search's bounds, checked.
struct Bounds {
    start_rate: f64,
    max_rate: f64,
    precision: f64,
    max_runs: usize,
    confirm: usize,
}

impl Bounds {
    fn of(args: &CapacityArgs) -> Result<Bounds, SetupError> {
        let rate = |t: &Option<String>, default: f64| -> Result<f64, SetupError> {
            Ok(t.as_deref().map(parse_rate).transpose()?.unwrap_or(default))
        };
        let precision = args.precision.unwrap_or(DEFAULT_PRECISION);
        if !(0.001..=1.0).contains(&precision) {
            return Err(SetupError::Other(format!(
                "invalid --precision {precision}: expected a share from 0.001 to 1, like 0.05"
            )));
        }
        let max_runs = args.max_runs.unwrap_or(DEFAULT_MAX_RUNS);
        if !(2..=100).contains(&max_runs) {
            return Err(SetupError::Other(format!(
                "invalid --max-runs {max_runs}: expected 2 to 100"
            )));
        }
        Ok(Bounds {
            start_rate: rate(&args.start_rate, 100.0)?,
            max_rate: rate(&args.max_rate, 100_000.0)?,
            precision,
            max_runs,
            confirm: args.confirm.unwrap_or(0).min(20),
        })
    }
}

/// The direct upstream alone is a search of its own; gateways are optional here.
fn targets(args: &CapacityArgs) -> Result<Vec<Named>, SetupError> {
    if !args.targets.gateways.is_empty() {
        return named(&args.targets, &args.load, "capacity");
    }
    let direct = args
        .targets
        .direct
        .as_deref()
        .ok_or(SetupError::Plan(PlanError::Missing(
            "--direct URL (the upstream, or the one target)",
        )))?;
    Ok(vec![Named {
        name: "direct".into(),
        target: crate::wire::target::parse_target_via(direct, &args.load.transport()?.connect_to)
            .map_err(PlanError::from)?,
        info: None,
        recording: None,
    }])
}

impl Command for CapacityArgs {
    type Plan = CapacityPlan;

    fn merged(self) -> anyhow::Result<CapacityArgs> {
        let path = self.load.preset.clone();
        over_preset(self, path.as_deref())
    }

    fn stand_ins(mut self) -> CapacityArgs {
        // The direct upstream alone; without a preset's --slo the plan is refused, as the
        // command refuses it.
        if self.targets.direct.is_none() {
            self.targets.direct = Some(PLACEHOLDER.into());
        }
        self
    }

    fn plan(self) -> anyhow::Result<CapacityPlan> {
        CapacityPlan::new(self)
    }

    fn execute(plan: CapacityPlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = execute(plan, command_line)?;
        let report = crate::report::capacity::terminal(&result);
        written(&result, result.plan.out.as_deref(), &report, code)
    }

    fn preset(p: &CapacityPlan) -> anyhow::Result<toml::Table> {
        let mut preset = table(&CapacityArgs {
            slo: Some(p.slo.text.clone()),
            start_rate: Some(p.start_rate.to_string()),
            max_rate: Some(p.max_rate.to_string()),
            precision: Some(p.precision),
            max_runs: Some(p.max_runs),
            confirm: Some(p.confirm),
            targets: p.args.targets.clone(),
            load: p.args.load.resolved(&p.plan),
        });
        // The search sets each run's rate.
        preset.remove("rate");
        Ok(preset)
    }

    fn describe(p: &CapacityPlan) -> String {
        format!(
            "capacity: {} from {} to {} req/s, within {:.0}%, at most {} runs per target",
            p.slo.text,
            p.start_rate,
            p.max_rate,
            p.precision * 100.0,
            p.max_runs
        )
    }
}

impl Step {
    fn of(rate: f64, run: &TargetRun, slo: &Slo) -> Step {
        let judged = slo.judge(run);
        let metric = |p: fn(&crate::results::metric::Summary) -> u64| {
            run.metrics.get("response_time").map_or(0, p)
        };
        let p99 = |name: &str| run.metrics.get(name).map_or(0, |s| s.p99);
        let generator_error_us = p99("schedule_lag").max(p99("send_delay"));
        let met = run.validity.valid && judged.iter().all(|j| j.met);
        let sent_all = run.achieved_rate >= rate * 0.99;
        let missed_clearly = missed_clearly(&judged, generator_error_us);
        Step {
            rate,
            met,
            judged,
            goodput: run.throughput,
            success_rate: run.success_rate,
            response_p50_us: metric(|s| s.p50),
            response_p99_us: metric(|s| s.p99),
            valid: run.validity.valid,
            invalid_reasons: run.validity.reasons.clone(),
            generator_error_us,
            conclusive: run.validity.valid || (!met && sent_all && missed_clearly),
            backlog_wait: None,
        }
    }
}

/// True when a run missed at least one objective, and missed every one it missed by more than
/// the generator's own error (an error share counts as it is). A run that met every objective
/// but was invalid missed nothing: it says nothing of the target.
fn missed_clearly(judged: &[Judged], generator_error_us: u64) -> bool {
    let mut missed = judged.iter().filter(|j| !j.met).peekable();
    missed.peek().is_some()
        && missed.all(|j| {
            j.objective.starts_with("errors") || j.value - j.limit > generator_error_us as f64
        })
}

/// Runs `loadgen capacity` and returns the result with the exit code it earns.
pub fn run_capacity(
    args: CapacityArgs,
    command: Vec<String>,
) -> anyhow::Result<(CapacityResult, u8)> {
    execute(CapacityPlan::new(args)?, command)
}

/// Runs `cp` and returns the result with the exit code it earns.
fn execute(cp: CapacityPlan, command: Vec<String>) -> anyhow::Result<(CapacityResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mock = reach(&cp.targets, cp.plan.timeout)?;
    let open_files = gatebench_shared::host::raise_open_file_limit().ok();
    crate::engine::run::check_open_files(&cp.plan, open_files.as_ref())?;
    crate::engine::run::stop_flag();
    let mut searches: Vec<TargetSearch> = Vec::new();
    for (i, target) in cp.targets.iter().enumerate() {
        // A gateway is searched up to what the direct upstream sustained.
        let ceiling = match searches.first() {
            Some(direct) if i > 0 => direct.capacity.unwrap_or(0.0).min(cp.max_rate),
            _ => cp.max_rate,
        };
        if ceiling < 1.0 {
            searches.push(TargetSearch {
                name: target.name.clone(),
                url: target.target.url.clone(),
                capacity: None,
                idle_ms: None,
                bracket: Bracket::default(),
                ceiling,
                limited_by: Some("upstream".into()),
                steps: Vec::new(),
                confirmations: Vec::new(),
            });
            continue;
        }
        let mut live = Live { cp: &cp, target };
        searches.push(search_target(&cp, &mut live, target, ceiling, i > 0));
    }
    let valid = searches
        .iter()
        .all(|s| matches!(s.limited_by.as_deref(), None | Some("ceiling" | "upstream")));
    let result = CapacityResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, open_files),
        plan: (&cp.plan).into(),
        slo: cp.slo,
        precision: cp.precision,
        start_rate: cp.start_rate,
        max_rate: cp.max_rate,
        max_runs: cp.max_runs,
        targets: cp.targets,
        mock,
        searches,
        valid,
    };
    Ok((result, if valid { EXIT_OK } else { EXIT_FAILED }))
}

/// The pause before a step whose generator fell behind is run again.
const RETRY_SETTLE: Duration = Duration::from_secs(1);

/// The step `run` gives; an inconclusive one (the generator fell behind) is kept in `steps`
/// and run once more after a pause. One late run is as likely the machine's neighbours as a
/// bound of the generator.
fn step_at(
    steps: &mut Vec<Step>,
    stepper: &mut dyn Stepper,
    mut run: impl FnMut(&mut dyn Stepper) -> Step,
) -> Step {
    let step = run(stepper);
    if step.conclusive || stop_requested() {
        return step;
    }
    steps.push(step);
    stepper.pause(RETRY_SETTLE);
    run(stepper)
}

/// Takes a search's steps, each after the target has served what a missed step before it left
/// queued.
struct Steps<'a> {
    cp: &'a CapacityPlan,
    /// The idle target's response time (`None`: no probe was answered, so nothing to wait
    /// for).
    idle: Option<Duration>,
    /// The last step missed the SLO.
    missed: bool,
}

impl Steps<'_> {
    fn take(&mut self, stepper: &mut dyn Stepper, rate: f64) -> Step {
        let wait = match self.idle {
            Some(idle) if self.missed => {
                let (wait, fastest) = backlog::wait(stepper, idle, &stop_requested);
                // A faster answer is a truer idle time (the first may have met a backlog).
                self.idle = fastest.map_or(Some(idle), |f| Some(f.min(idle)));
                Some(wait)
            }
            _ => None,
        };
        let run = stepper.run(rate);
        let mut step = Step::of(rate, &run, &self.cp.slo);
        step.backlog_wait = wait;
        self.missed = !step.met;
        step
    }
}

fn search_target(
    cp: &CapacityPlan,
    stepper: &mut dyn Stepper,
    target: &Named,
    ceiling: f64,
    gateway: bool,
) -> TargetSearch {
    let mut search = Search::new(cp.start_rate, ceiling, cp.precision, cp.max_runs);
    let mut taken = Steps {
        cp,
        idle: backlog::idle_time(stepper),
        missed: false,
    };
    if taken.idle.is_none() && !cp.plan.quiet {
        gatebench_shared::say!(
            "loadgen: capacity {}: no request sent alone was answered; steps will not wait for \
             a missed step's backlog",
            target.name
        );
    }
    let mut steps = Vec::new();
    let mut limited_by = None;
    let bracket = loop {
        match search.next_step() {
            Next::Done(bracket) => break bracket,
            Next::Run(rate) => {
                if stop_requested() {
                    limited_by = Some("interrupted".to_string());
                    break search.bracket();
                }
                if !cp.plan.quiet {
                    gatebench_shared::say!(
                        "loadgen: capacity {}: run {} at {:.1} req/s",
                        target.name,
                        steps.len() + 1,
                        rate
                    );
                }
                let step = step_at(&mut steps, stepper, |s| taken.take(s, rate));
                let (met, conclusive, goodput) = (step.met, step.conclusive, step.goodput);
                steps.push(step);
                if stop_requested() {
                    // Stopped during the step or the wait before it: it ran cut short.
                    limited_by = Some("interrupted".to_string());
                    break search.bracket();
                }
                if !conclusive {
                    // The generator did not keep its schedule twice: nothing above is
                    // measurable.
                    limited_by = Some("generator".to_string());
                    search.record(rate, false, 0.0);
                    break search.bracket();
                }
                search.record(rate, met, goodput);
            }
        }
    };
    let limited_by = limited_by.or_else(|| bound_of(&bracket, gateway));
    let mut confirmations = Vec::new();
    for _ in 0..cp.confirm {
        // `--confirm`: the bracket's two rates run again, that many times.
        for rate in [bracket.passed, bracket.failed].into_iter().flatten() {
            if stop_requested() {
                break;
            }
            confirmations.push(taken.take(stepper, rate));
        }
    }
    TargetSearch {
        name: target.name.clone(),
        url: target.target.url.clone(),
        capacity: bracket.passed,
        idle_ms: taken.idle.map(|d| d.as_secs_f64() * 1e3),
        bracket,
        ceiling,
        limited_by,
        steps,
        confirmations,
    }
}

/// Why a finished search's answer is a bound rather than a bracket, when it is one.
fn bound_of(bracket: &Bracket, gateway: bool) -> Option<String> {
    if bracket.at_ceiling {
        Some(if gateway { "upstream" } else { "ceiling" }.to_string())
    } else if bracket.passed.is_none() && bracket.failed.is_some_and(|f| f <= 1.0) {
        Some("floor".to_string())
    } else if !bracket.resolved {
        Some("runs".to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(objective: &str, value: f64, limit: f64) -> Judged {
        Judged {
            objective: objective.into(),
            value,
            limit,
            met: value < limit,
        }
    }

    fn step(conclusive: bool) -> Step {
        Step {
            rate: 800.0,
            met: conclusive,
            judged: vec![],
            goodput: 800.0,
            success_rate: 1.0,
            response_p50_us: 20_000,
            response_p99_us: 28_000,
            valid: conclusive,
            invalid_reasons: vec![],
            generator_error_us: 0,
            conclusive,
            backlog_wait: None,
        }
    }

    /// A target nobody may step on: `step_at` runs its steps itself.
    struct Untouched;

    impl Stepper for Untouched {
        fn run(&mut self, _: f64) -> TargetRun {
            unreachable!("the test runs its steps")
        }
        fn probe(&mut self) -> stepper::Probe {
            unreachable!("the test runs its steps")
        }
        fn pause(&mut self, _: Duration) {}
    }

    #[test]
    fn a_step_the_generator_fell_behind_in_is_run_once_more() {
        // Late once: the second run is the step's, the first kept beside it.
        let mut runs = [false, true].into_iter();
        let mut steps = vec![];
        let got = step_at(&mut steps, &mut Untouched, |_| step(runs.next().unwrap()));
        assert!(got.conclusive);
        assert_eq!(steps.len(), 1);
        assert!(!steps[0].conclusive);
        // Late twice: the second is returned for the search to stop on.
        let mut runs = [false, false].into_iter();
        let mut steps = vec![];
        let got = step_at(&mut steps, &mut Untouched, |_| step(runs.next().unwrap()));
        assert!(!got.conclusive);
        assert_eq!(steps.len(), 1);
        assert!(runs.next().is_none(), "run twice, not more");
        // On time: run once.
        let mut calls = 0;
        let mut steps = vec![];
        let got = step_at(&mut steps, &mut Untouched, |_| {
            calls += 1;
            step(true)
        });
        assert!(got.conclusive && steps.is_empty() && calls == 1);
    }

    #[test]
    fn only_a_run_that_missed_by_more_than_the_generators_error_is_a_clear_miss() {
        // p99 128 ms against 50 ms, the generator 2 ms late: the target's miss.
        assert!(missed_clearly(&[judged("p99", 128_000.0, 50_000.0)], 2_000));
        // Missed by 143 µs with the generator 2 ms late: could be the generator's.
        assert!(!missed_clearly(&[judged("p99", 50_143.0, 50_000.0)], 2_000));
        // Every objective met, the run invalid: no miss at all.
        assert!(!missed_clearly(
            &[
                judged("p99", 43_519.0, 50_000.0),
                judged("errors", 0.0, 0.01)
            ],
            2_237
        ));
        // Errors count as they are.
        assert!(missed_clearly(&[judged("errors", 0.2, 0.01)], 2_000));
    }

    mod simulated {
        //! The whole search on simulated time against a simulated target: one server taking
        //! exactly 1 ms a request, so its knee is known by arithmetic.

        use std::sync::Arc;

        use clap::Parser;
        use gatebench_shared::sim::SimTime;

        use super::super::*;
        use crate::commands::CommandArgs;
        use crate::engine::run::simulated::{block_on, run_simulated};
        use crate::wire::exchange::Slot;
        use crate::wire::outcome::ErrorKind;
        use crate::wire::simulated::{Service, SimulatedTarget};
        use stepper::{plan_at, Probe};

        /// A search's steps on a model, on simulated time; with `waits: false`, a target whose
        /// probes all come back at once (the search as it was before it waited).
        struct Simulated {
            time: Arc<SimTime>,
            model: SimulatedTarget,
            plan: Plan,
            target: crate::model::target::Target,
            waits: bool,
        }

        impl Stepper for Simulated {
            fn run(&mut self, rate: f64) -> TargetRun {
                let plan = Arc::new(plan_at(&self.plan, rate));
                run_simulated(plan, self.target.clone(), &self.time, &self.model)
            }

            fn probe(&mut self) -> Probe {
                if !self.waits {
                    return Probe {
                        took: Duration::from_millis(1),
                        error: None,
                    };
                }
                let (time, model, timeout) = (&self.time, &self.model, self.plan.timeout);
                let from = time.now_ns();
                let got = block_on(time, async {
                    let clock = RunClock::simulated(time, Duration::ZERO);
                    let slot = Slot {
                        index: 0,
                        due_ns: 0,
                        dispatched_ns: 0,
                        keep_answer: false,
                        lane: None,
                    };
                    let body = bytes::Bytes::new();
                    let exchange = model.exchange(&clock, slot, &body);
                    clock
                        .timeout(timeout, exchange)
                        .await
                        .unwrap_or(Err(ErrorKind::Timeout))
                });
                Probe {
                    took: Duration::from_nanos(time.now_ns() - from),
                    error: got.err(),
                }
            }

            fn pause(&mut self, d: Duration) {
                let time = &self.time;
                block_on(time, time.sleep_until(time.now_ns() + d.as_nanos() as u64));
            }
        }

        use crate::wire::clock::RunClock;

        fn capacity_plan() -> CapacityPlan {
            let line = [
                "loadgen",
                "capacity",
                "--direct",
                "http://127.0.0.1:9/v1/chat/completions",
                "--slo",
                "p99<5ms",
                "--duration",
                "1s",
                "--start-rate",
                "100",
                "--precision",
                "0.05",
                "--max-runs",
                "12",
                "--timeout",
                "200ms",
                "--quiet",
            ];
            match crate::Cli::try_parse_from(line)
                .expect("the flags parse")
                .command
            {
                CommandArgs::Capacity(mut args) => {
                    args.load = crate::engine::run::simulated::own(args.load);
                    CapacityPlan::new(args).expect("a plan")
                }
                _ => unreachable!("a capacity command line"),
            }
        }

        fn search(waits: bool) -> TargetSearch {
            let cp = capacity_plan();
            let time = SimTime::new(1_000_000_000);
            let mut stepper = Simulated {
                model: SimulatedTarget::new(&time, 1, Service::Fixed(1_000_000), 1),
                time,
                plan: cp.plan.clone(),
                target: cp.targets[0].target.clone(),
                waits,
            };
            search_target(&cp, &mut stepper, &cp.targets[0], cp.max_rate, false)
        }

        /// The rate above which a 1 s step at even spacing misses p99 < 5 ms on one server of
        /// 1 ms: request k waits k(1 ms - 1/r), and the p99's request (k = 0.99 r) must be
        /// answered within 5 ms, so 0.99 (r / 1000 - 1) < 0.004.
        const KNEE: f64 = 1_000.0 * (1.0 + 0.004 / 0.99);

        #[test]
        fn the_search_brackets_the_knee_and_steps_only_once_the_backlog_is_served() {
            let s = search(true);
            let (lo, hi) = (s.bracket.passed.unwrap(), s.bracket.failed.unwrap());
            let rates: Vec<_> = s
                .steps
                .iter()
                .map(|s| {
                    (
                        s.rate as u64,
                        s.met,
                        s.goodput as u64,
                        s.response_p99_us,
                        s.backlog_wait.as_ref().map(|w| w.waited_ms as u64),
                    )
                })
                .collect();
            assert!(lo <= KNEE && KNEE < hi, "{lo}..{hi}: {rates:?}");
            assert!(
                s.bracket.resolved && hi / lo - 1.0 <= 0.05,
                "{:?}",
                s.bracket
            );
            assert_eq!(s.limited_by, None);
            for pair in s.steps.windows(2) {
                // After a miss the search waited, and the next step started on an idle target.
                assert_eq!(
                    pair[1].backlog_wait.is_some(),
                    !pair[0].met,
                    "{:#?}",
                    s.steps
                );
                if let Some(wait) = &pair[1].backlog_wait {
                    assert!(wait.cleared, "{wait:?}");
                }
            }
            // Every step at or under the knee met the SLO: none paid for a backlog.
            for step in &s.steps {
                assert_eq!(step.met, step.rate <= KNEE, "{step:#?}");
            }
        }

        #[test]
        fn without_the_wait_a_step_after_an_overload_pays_for_its_backlog() {
            // The search as it was: a rate under the knee, run on the backlog a missed step
            // left, misses too, and the bracket ends below the knee.
            let s = search(false);
            let wrong = s.steps.iter().find(|step| step.rate <= KNEE && !step.met);
            assert!(wrong.is_some(), "{:#?}", s.steps);
            assert!(s.bracket.failed.unwrap() < KNEE, "{:?}", s.bracket);
        }
    }
}
