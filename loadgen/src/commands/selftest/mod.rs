//! `loadgen selftest`: can this machine measure? Before anyone trusts a figure, it measures,
//! on this machine as it is now, what every figure stands on: the kernel timer's lateness, the
//! loopback's round trip, loadgen's schedule lag at 200 and 5,000 req/s with its defaults, the
//! mock's emission error at 200 µs and 3 ms, an identical mock's verdict and a known 20 µs
//! delay's in paired rounds (as `overhead` pairs them); each beside its target, with the smallest added latency the machine resolves.
//! Exit 0 when every target is met, 3 (with a sentence naming each figure that missed) when
//! the host's timer or neighbours, not the code, keep it from them.

mod probes;

use std::time::Duration;

use crate::commands::command::no_preset;
use crate::commands::{show, Command};
use crate::engine::run::{SetupError, EXIT_HOST, EXIT_OK};
use crate::options::SelftestArgs;
use crate::report::output::write_json;
use crate::results::selftest::{Figure, SelftestResult};
use crate::results::validity::LAG_P50_LIMIT_US;

/// The result's schema name.
pub const SCHEMA: &str = "gatebench.loadgen.selftest/1";
/// The mock's emission error a median may have, µs: a spin's, not a kernel wake-up's.
const MOCK_ERROR_P50_US: f64 = 25.0;
/// The schedule lag a p99 may have, µs (a valid run's).
const LAG_P99_US: f64 = 1_000.0;

/// The plan: how long each part runs, and where the result goes.
#[derive(Debug)]
pub struct SelftestPlan {
    seconds: Duration,
    args: SelftestArgs,
}

impl Command for SelftestArgs {
    type Plan = SelftestPlan;

    fn plan(self) -> anyhow::Result<SelftestPlan> {
        let seconds = humantime::parse_duration(self.seconds.trim())
            .ok()
            .filter(|d| (Duration::from_millis(100)..=Duration::from_secs(60)).contains(d))
            .ok_or_else(|| {
                SetupError::Other(format!(
                    "invalid --seconds {:?}: expected a duration from 100ms to 60s, like 2s",
                    self.seconds
                ))
            })?;
        Ok(SelftestPlan {
            seconds,
            args: self,
        })
    }

    fn execute(plan: SelftestPlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = run(&plan, command_line)?;
        let mut report = crate::report::selftest::terminal(&result);
        report.push('\n');
        match &plan.args.out {
            // The result on standard output, the report beside it on standard error.
            Some(path) if path.as_os_str() == "-" => {
                show(&serde_json::to_string(&result)?);
                show("\n");
                gatebench_shared::say!("{}", report.trim_end());
            }
            Some(path) => {
                write_json(&result, path)?;
                show(&report);
            }
            None => show(&report),
        }
        Ok(code)
    }

    fn preset(_: &SelftestPlan) -> anyhow::Result<toml::Table> {
        Err(no_preset())
    }

    fn describe(plan: &SelftestPlan) -> String {
        format!("selftest: {} s a part", plan.seconds.as_secs_f64())
    }
}

/// Runs `loadgen selftest` and returns its result with the exit code it earns.
pub fn run_selftest(
    args: SelftestArgs,
    command_line: Vec<String>,
) -> anyhow::Result<(SelftestResult, u8)> {
    run(&Command::plan(args)?, command_line)
}

fn run(plan: &SelftestPlan, command_line: Vec<String>) -> anyhow::Result<(SelftestResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let say = |what: &str| {
        if !plan.args.quiet {
            gatebench_shared::say!("loadgen: selftest: {what}");
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let seconds = format!("{}ms", plan.seconds.as_millis());
    let wakes = (plan.seconds.as_millis() as usize).max(100);
    let mut figures = Vec::new();

    say("the kernel timer");
    let [p50, p99, p999] = probes::percentiles_us(probes::timer_lateness(wakes)?);
    for (q, v) in [("p50", p50), ("p99", p99), ("p99.9", p999)] {
        figures.push(own(&format!("kernel timer lateness {q} (1 ms sleeps)"), v));
    }
    say("the loopback");
    let [p50, p99, _] = probes::percentiles_us(probes::loopback_round_trips(2_000)?);
    figures.push(own("loopback round trip p50", p50));
    figures.push(own("loopback round trip p99", p99));

    for rate in [200, 5_000] {
        say(&format!("loadgen's schedule at {rate} req/s"));
        let (p50, p99) = probes::schedule_lag(rate, &seconds, cores)?;
        let name = |q: &str| format!("schedule lag {q} at {rate} req/s");
        figures.push(at_most(&name("p50"), p50 as f64, LAG_P50_LIMIT_US as f64));
        figures.push(at_most(&name("p99"), p99 as f64, LAG_P99_US));
    }
    for latency in ["200us", "3ms"] {
        say(&format!("the mock's timer at {latency}"));
        let error = probes::mock_error(latency, &seconds, cores)?;
        let name = |q: &str| format!("mock emission error {q} at {latency}");
        match error {
            Some((p50, p99)) => {
                figures.push(at_most(&name("p50"), p50 as f64, MOCK_ERROR_P50_US));
                figures.push(own(&name("p99"), p99 as f64));
            }
            None => figures.push(unmeasured(&name("p50"), "the mock timed no answer")),
        }
    }
    say("an identical mock and a known 20 µs delay, in paired rounds");
    let rounds = (plan.seconds.as_millis() as usize / 5).max(40);
    let (identical, known, resolution) = probes::verdicts(rounds, cores)?;
    let resolution_us = Some(resolution);
    figures.push(verdict(
        &format!("{} mock's median", probes::IDENTICAL),
        &identical,
        "within the resolution",
    ));
    figures.push(verdict(
        "a known 20 µs delay's median",
        &known,
        "adds latency",
    ));

    let misses: Vec<String> = figures.iter().filter(|f| !f.met).map(missed).collect();
    let can_measure = misses.is_empty();
    let result = SelftestResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command_line, started_at, None),
        seconds: plan.seconds.as_secs_f64(),
        figures,
        resolution_us,
        can_measure,
        misses,
    };
    Ok((result, if can_measure { EXIT_OK } else { EXIT_HOST }))
}

/// A figure of the machine's own, held to no target.
fn own(name: &str, value: f64) -> Figure {
    Figure {
        name: name.into(),
        value: Some(value),
        unit: "us".into(),
        target: None,
        met: true,
        said: None,
    }
}

/// A figure that must be at most `limit` µs.
fn at_most(name: &str, value: f64, limit: f64) -> Figure {
    Figure {
        target: Some(format!("<= {limit}")),
        met: value <= limit,
        ..own(name, value)
    }
}

/// A figure with a target that could not be measured, for `why`.
fn unmeasured(name: &str, why: &str) -> Figure {
    Figure {
        name: name.into(),
        value: None,
        unit: "us".into(),
        target: Some("measured".into()),
        met: false,
        said: Some(why.into()),
    }
}

/// A median's added latency (µs) and its verdict, which must start with `wanted`.
fn verdict(name: &str, v: &probes::Verdict, wanted: &str) -> Figure {
    Figure {
        name: name.into(),
        value: v.added_us.is_finite().then_some(v.added_us),
        unit: "us".into(),
        target: Some(wanted.into()),
        met: v.verdict.starts_with(wanted),
        said: Some(v.verdict.clone()),
    }
}

/// The sentence that names a missed figure.
fn missed(f: &Figure) -> String {
    let value = match (f.value, &f.said) {
        (_, Some(said)) if f.target.as_deref().is_some_and(|t| !t.starts_with("<=")) => {
            format!("'{said}'")
        }
        (Some(v), _) => format!("{v:.0} {}", f.unit),
        (None, said) => said.clone().unwrap_or_default(),
    };
    format!(
        "{} is {value}, not {}: this host's timer or its neighbours keep loadgen from its \
         targets now, so figures measured here need that margin",
        f.name,
        f.target.as_deref().unwrap_or("")
    )
}
