//! `--print-config`: a command's options as a profile, after the profile file and the flags are
//! merged and every option left unset is replaced by the value the plan resolved it to. The
//! text reads back with `--profile` into the same plan.

use gatebench_shared::latency::format_us;

use crate::generator::pace::Pace;
use crate::generator::plan::{Load, Plan, DEFAULT_MAX_TOKENS, DEFAULT_MODEL};
use crate::generator::schedule::Arrival;
use crate::options::CompareArgs;
use crate::options::OverheadArgs;
use crate::options::{Command, RunArgs};
use crate::results::overhead::OverheadPlan;
use crate::wire::target::RequestSpec;

/// `args` with every setting the plan resolved: defaults filled in, the load named once.
pub fn run_args(args: &RunArgs, plan: &Plan) -> RunArgs {
    let (rate, arrival, concurrency) = match plan.load {
        Load::Open { rate, arrival } => (
            Some(rate.to_string()),
            Some(
                match arrival {
                    Arrival::Constant => "constant",
                    Arrival::Poisson => "poisson",
                }
                .to_string(),
            ),
            None,
        ),
        Load::Closed { concurrency } => (None, None, Some(concurrency)),
    };
    let scenario_body = args.body.is_none() && plan.corpus.is_none();
    let duration = match (plan.duration, plan.requests) {
        (Some(d), _) => Some(format_us(d.as_micros() as u64)),
        (None, None) => Some("forever".into()),
        (None, Some(_)) => None,
    };
    // A ramp and a trace bring their own rate and duration: the options' stand.
    let (rate, arrival, duration) = match plan.pace {
        Pace::Steady => (rate, arrival, duration),
        Pace::Stages(_) => (args.rate.clone(), arrival, None),
        Pace::Trace(_) => (None, None, args.duration.clone()),
    };
    RunArgs {
        profile: None,
        targets: args.targets.clone(),
        rate,
        arrival,
        concurrency,
        requests: plan.requests,
        duration,
        warmup: Some(format_us(plan.warmup.as_micros() as u64)),
        connections: Some(plan.connections),
        threads: Some(plan.threads),
        pin: (!plan.pin.is_empty()).then(|| {
            let cores: Vec<String> = plan.pin.iter().map(usize::to_string).collect();
            cores.join(",")
        }),
        scenario: if plan.corpus.is_some() {
            args.scenario.clone()
        } else {
            scenario_body.then(|| plan.request.scenario.clone())
        },
        body: args.body.clone(),
        requests_file: args.requests_file.clone(),
        requests_order: args.requests_order.clone(),
        stages: args.stages.clone(),
        trace: args.trace.clone(),
        speedup: args.speedup,
        http2: plan.transport.http2,
        cacert: plan.transport.cacert.clone(),
        insecure: plan.transport.insecure,
        connect_to: args.connect_to.clone(),
        headers: args.headers.clone(),
        model: (scenario_body || args.trace.is_some())
            .then(|| args.model.as_deref().unwrap_or(DEFAULT_MODEL).to_string()),
        max_tokens: scenario_body.then(|| args.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        timeout: Some(format_us(plan.timeout.as_micros() as u64)),
        grace: plan.grace.map(|g| format_us(g.as_micros() as u64)),
        max_pending: Some(plan.max_pending),
        spin: Some(format_us(plan.spin.as_micros() as u64)),
        seed: Some(plan.seed),
        shard: (plan.shard.count > 1).then(|| plan.shard.to_string()),
        start_at: args.start_at.clone(),
        clock_ref: args.clock_ref.clone(),
        out: args.out.clone(),
        hgrm: args.hgrm.clone(),
        hdr_log: args.hdr_log.clone(),
        max_error_rate: args.max_error_rate,
        max_p99: args.max_p99.clone(),
        upstream_metrics: args.upstream_metrics.clone(),
        quiet: args.quiet,
    }
}

/// The profile of `loadgen run`.
pub fn run_profile(args: &RunArgs, plan: &Plan) -> toml::Table {
    table(&run_args(args, plan))
}

/// The profile of `loadgen compare`, `sweep` or `ladder`: the load's options, the comparison's
/// (`trials` and `settle` resolved) and the command's own keys (`levels`, `level-kind`).
pub fn compare_profile(
    args: &CompareArgs,
    plan: &Plan,
    trials: usize,
    settle_us: u64,
    own: &[(&str, String)],
) -> toml::Table {
    let mut out = run_profile(&args.run, plan);
    let mut put = |key: &str, value: toml::Value| {
        out.insert(key.to_string(), value);
    };
    let texts = |items: &[String]| {
        toml::Value::Array(items.iter().cloned().map(toml::Value::String).collect())
    };
    if let Some(direct) = &args.direct {
        put("direct", direct.clone().into());
    }
    for (key, items) in [
        ("gateway", &args.gateways),
        ("gateway-info", &args.gateway_info),
        ("gateway-recording", &args.gateway_recording),
        ("sample-pid", &args.sample),
    ] {
        if !items.is_empty() {
            put(key, texts(items));
        }
    }
    put("trials", toml::Value::Integer(trials as i64));
    put("settle", format_us(settle_us).into());
    if let Some(twin) = &args.twin {
        put("twin", twin.clone().into());
    }
    if let Some(min_effect) = &args.min_effect {
        put("min-effect", min_effect.clone().into());
    }
    for (key, value) in own {
        put(key, value.clone().into());
    }
    out
}

/// The profile of `loadgen overhead`.
pub fn overhead_profile(args: &OverheadArgs, plan: &OverheadPlan<RequestSpec>) -> toml::Table {
    let scenario_body = args.body.is_none();
    let resolved = OverheadArgs {
        profile: None,
        rounds: Some(plan.rounds),
        warmup_rounds: Some(plan.warmup_rounds),
        trials: Some(plan.trials),
        round_gap: Some(format_us(plan.round_gap.as_micros() as u64)),
        scenario: scenario_body.then(|| {
            let names: Vec<&str> = plan.requests.iter().map(|r| r.scenario.as_str()).collect();
            names.join(",")
        }),
        model: scenario_body.then(|| args.model.as_deref().unwrap_or(DEFAULT_MODEL).to_string()),
        max_tokens: scenario_body.then(|| args.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        timeout: Some(format_us(plan.timeout.as_micros() as u64)),
        seed: Some(plan.seed),
        resamples: Some(plan.resamples),
        ..args.clone()
    };
    table(&resolved)
}

/// A set of options as a TOML table. Invariant: options are strings, numbers and booleans,
/// which always serialise.
fn table<T: serde::Serialize>(options: &T) -> toml::Table {
    toml::Table::try_from(options).expect("options serialise to TOML")
}

fn micros(d: std::time::Duration) -> u64 {
    d.as_micros() as u64
}

/// The text `--print-config` prints.
pub fn text(profile: &toml::Table) -> String {
    // Invariant: a table of strings, numbers, booleans and arrays of them serialises.
    toml::to_string(profile).expect("a profile serialises")
}

/// The resolved options of `command` as a profile, or an error when they make no valid plan.
/// Nothing is sent; targets are only parsed and resolved.
pub fn print(command: Command) -> anyhow::Result<String> {
    use crate::engine::run::SetupError;
    let profile = match command {
        Command::Run(args) => {
            let args = crate::options::profile::run(args)?;
            let plan = args.clone().plan().map_err(SetupError::from)?;
            let mut profile = run_profile(&args, &plan);
            if args.targets.is_empty() && args.rate.is_none() && args.concurrency.is_none() {
                // The demo picks its own rate for each of its phases.
                profile.remove("rate");
            }
            profile
        }
        Command::Overhead(args) => {
            let args = crate::options::profile::overhead(args)?;
            let plan = args.clone().plan().map_err(SetupError::from)?;
            overhead_profile(&args, &plan)
        }
        Command::Compare(args) => {
            let p = crate::commands::compare::ComparePlan::new(args)?;
            compare_profile(
                &p.args,
                &p.plan,
                p.comparison.trials,
                micros(p.comparison.settle),
                &[],
            )
        }
        Command::Sweep(args) => {
            let p = crate::commands::sweep::SweepPlan::new(args)?;
            let own = [
                ("levels", p.levels_text),
                ("level-kind", p.kind.to_string()),
            ];
            let mut profile = compare_profile(
                &p.compare,
                &p.plans[0],
                p.comparison.trials,
                micros(p.comparison.settle),
                &own,
            );
            // Each level sets the load (and at least its own count of connections).
            profile.remove("rate");
            profile.remove("concurrency");
            if p.compare.run.connections.is_none() {
                profile.remove("connections");
            }
            profile
        }
        Command::Ladder(args) => {
            let p = crate::commands::ladder::LadderPlan::new(args)?;
            let own = [("levels", p.levels_text)];
            let mut profile = compare_profile(&p.compare, &p.plan, 1, micros(p.settle), &own);
            // A ladder has no trials and no rate: each level is N streams at once.
            for key in ["trials", "rate", "arrival"] {
                profile.remove(key);
            }
            profile
        }
        Command::Capacity(args) => {
            let p = crate::commands::capacity::CapacityPlan::new(args)?;
            let own = [
                ("slo", p.slo.text.clone()),
                ("start-rate", p.start_rate.to_string()),
                ("max-rate", p.max_rate.to_string()),
                ("precision", p.precision.to_string()),
                ("max-runs", p.max_runs.to_string()),
                ("confirm", p.confirm.to_string()),
            ];
            let mut profile = compare_profile(&p.compare, &p.plan, 1, 0, &own);
            // The search sets each run's rate; it has no trials and no settle.
            for key in ["trials", "settle", "rate"] {
                profile.remove(key);
            }
            profile
        }
        Command::Profile(args) => {
            if !args.diff.is_empty() {
                anyhow::bail!("--print-config is for a profile's load, not for --diff");
            }
            let p = crate::commands::perf::ProfilePlan::new(args)?;
            let own = [
                ("frequency", p.frequency.to_string()),
                ("call-graph", p.call_graph.name().to_string()),
                ("off-cpu", if p.off_cpu { "on" } else { "off" }.to_string()),
            ];
            compare_profile(
                &p.args.compare,
                &p.plan,
                p.comparison.trials,
                micros(p.comparison.settle),
                &own,
            )
        }
        Command::Merge(_) | Command::Report(_) | Command::CheckProfile(_) | Command::Corpus(_) => {
            anyhow::bail!(
                "--print-config is for run, overhead, compare, sweep, ladder, capacity and profile \
                 (merge, report, check-profile and corpus take no profile)"
            )
        }
    };
    Ok(text(&profile))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    const DIRECT: &str = "http://127.0.0.1:9/v1/chat/completions";
    const GATEWAY: &str = "gw=http://127.0.0.1:9/v1/chat/completions";
    const RUN: &[&str] = &[
        "loadgen",
        "run",
        "--target",
        DIRECT,
        "--rate",
        "2k",
        "--arrival",
        "poisson",
        "--seed",
        "7",
        "--duration",
        "90s",
        "--pin",
        "0",
        "--header",
        "x-a: b",
    ];

    /// The printed profile, and the profile printed again from it (`--profile` + the same
    /// `--print-config`): the text must be a fixed point.
    fn twice(args: &[&str]) -> (String, String) {
        let cli = crate::Cli::try_parse_from(args).expect("the test's flags parse");
        let first = print(cli.command).expect("a valid plan");
        static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "loadgen-print-config-{}-{n}.toml",
            std::process::id()
        ));
        std::fs::write(&path, &first).unwrap();
        let command = args[1];
        let again = crate::Cli::try_parse_from([
            "loadgen",
            command,
            "--profile",
            path.to_str().unwrap(),
            "--print-config",
        ])
        .unwrap();
        let second = print(again.command).expect("the printed profile plans");
        std::fs::remove_file(&path).ok();
        (first, second)
    }

    #[test]
    fn every_command_prints_a_profile_that_reads_back_the_same() {
        let cases: [&[&str]; 7] = [
            RUN,
            &[
                "loadgen",
                "overhead",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--rounds",
                "20",
            ],
            &[
                "loadgen",
                "compare",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--concurrency",
                "8",
                "--duration",
                "5s",
                "--twin",
                "none",
            ],
            &[
                "loadgen",
                "sweep",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--levels",
                "1,4",
            ],
            &[
                "loadgen",
                "ladder",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--levels",
                "5,10",
            ],
            &[
                "loadgen",
                "capacity",
                "--direct",
                DIRECT,
                "--slo",
                "p99<50ms,errors<1%",
                "--start-rate",
                "500",
                "--duration",
                "3s",
            ],
            &[
                "loadgen",
                "run",
                "--target",
                "https://api.example.invalid/v1/chat/completions",
                "--connect-to",
                "api.example.invalid:443:127.0.0.1:9",
                "--insecure",
                "--http2",
            ],
        ];
        for args in cases {
            let (first, second) = twice(args);
            assert_eq!(first, second, "{args:?}");
        }
    }

    #[test]
    fn defaults_are_written_out_and_the_flags_kept() {
        let (text, _) = twice(RUN);
        let profile: toml::Table = toml::from_str(&text).unwrap();
        let get = |k: &str| profile.get(k).map(|v| v.to_string()).unwrap_or_default();
        assert_eq!(get("rate"), "\"2000\"");
        assert_eq!(get("arrival"), "\"poisson\"");
        assert_eq!(get("duration"), "\"90s\"");
        assert_eq!(get("connections"), "256");
        assert_eq!(get("timeout"), "\"30s\"");
        assert_eq!(get("model"), "\"gpt-4o-mini\"");
        assert_eq!(get("header"), "[\"x-a: b\"]");
        let (overhead, _) = twice(&[
            "loadgen",
            "overhead",
            "--direct",
            DIRECT,
            "--gateway",
            GATEWAY,
        ]);
        assert!(overhead.contains("trials = 10"), "{overhead}");
        assert!(
            overhead.contains("scenario = \"chat,chat-stream\""),
            "{overhead}"
        );
    }

    #[test]
    fn the_printed_profile_makes_the_same_plan() {
        let args = [
            "loadgen",
            "run",
            "--target",
            DIRECT,
            "--rate",
            "2.5k",
            "--arrival",
            "poisson",
            "--warmup",
            "1500ms",
            "--connections",
            "8",
            "--timeout",
            "2s",
            "--grace",
            "1s",
            "--scenario",
            "chat-stream",
            "--max-tokens",
            "40",
            "--model",
            "m",
        ];
        let crate::Command::Run(run) = crate::Cli::try_parse_from(args).unwrap().command else {
            unreachable!("a run")
        };
        let plan = run.clone().plan().unwrap();
        let profile: RunArgs = toml::from_str(&text(&run_profile(&run, &plan))).unwrap();
        let again = RunArgs::default().over(profile).plan().unwrap();
        assert_eq!(
            serde_json::to_value(&plan).unwrap(),
            serde_json::to_value(&again).unwrap()
        );
    }

    #[test]
    fn an_invalid_plan_prints_nothing() {
        let cli = crate::Cli::try_parse_from(["loadgen", "run", "--rate", "0", "--print-config"])
            .unwrap();
        assert!(print(cli.command).is_err());
    }
}
