//! A `loadgen run` checked into its plan before anything is sent: the flags over the preset,
//! the demo's phases and rates when no target is given, and the runs a shard or a start instant
//! allows.

use crate::engine::metrics_endpoint::parse_listen;
use crate::engine::run::SetupError;
use crate::generator::plan::Plan;
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::options::LoadArgs;

/// The demo's rate for whole answers.
const DEMO_RATE: f64 = 5_000.0;

/// The demo's rate for 16-token streams: each is 18 events for the generator to read, and at
/// 5,000 a second (90,000 events) one generator core on a 2-core machine falls behind its own
/// schedule (lag p99 4.5 ms), which makes the run invalid; 2,000 a second keeps it under 1 ms.
const DEMO_STREAM_RATE: f64 = 2_000.0;

/// A validated `loadgen run`: what it runs, and what `--print-config` prints.
#[derive(Debug)]
pub struct RunPlan {
    /// The options as merged (the preset under the flags).
    pub args: LoadArgs,
    /// The plan; the demo's targets are filled in when its mock starts.
    pub plan: Plan,
    /// Each phase: the plan with a scenario's requests (the demo's two, else the one).
    pub phases: Vec<Plan>,
    /// No target given: an embedded mock is the target.
    pub demo: bool,
    /// The demo picks its own rate for each of its phases.
    pub demo_rates: bool,
    /// Where the live metrics endpoint listens (`--metrics-listen`).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// How long the live endpoint outlives the run.
    pub metrics_linger: std::time::Duration,
}

impl RunPlan {
    /// Checks `args` (merged with their profile) without sending anything.
    pub fn new(args: LoadArgs) -> anyhow::Result<RunPlan> {
        let demo = args.targets.is_empty();
        let demo_rates = demo && args.rate.is_none() && args.concurrency.is_none();
        let open = |rate| {
            demo_rates.then_some(Load::Open {
                rate,
                arrival: Arrival::Constant,
            })
        };
        let plan = args
            .clone()
            .plan_at(open(DEMO_RATE))
            .map_err(SetupError::from)?;
        let phases = if demo && args.request.scenario.is_none() && args.request.body.is_none() {
            vec![plan.clone(), demo_streams(&args, &plan, demo_rates)?]
        } else {
            vec![plan.clone()]
        };
        check_together(&plan)?;
        let metrics_listen = args
            .metrics_listen
            .as_deref()
            .map(|text| parse_listen(text, plan.shard.index))
            .transpose()?;
        let metrics_linger = linger(&args)?;
        Ok(RunPlan {
            args,
            plan,
            phases,
            demo,
            demo_rates,
            metrics_listen,
            metrics_linger,
        })
    }
}

/// The demo's second phase: streams, at the demo's own rate for them when no load was asked
/// for.
fn demo_streams(args: &LoadArgs, plan: &Plan, demo_rates: bool) -> Result<Plan, SetupError> {
    Ok(Plan {
        request: args.request_spec(Some("chat-stream"))?,
        load: match plan.load {
            Load::Open { arrival, .. } if demo_rates => Load::Open {
                rate: DEMO_STREAM_RATE,
                arrival,
            },
            load => load,
        },
        ..plan.clone()
    })
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

/// `--metrics-linger`: a duration, and only beside `--metrics-listen`.
fn linger(args: &LoadArgs) -> Result<std::time::Duration, SetupError> {
    let Some(text) = args.metrics_linger.as_deref() else {
        return Ok(std::time::Duration::ZERO);
    };
    let linger = gatebench_shared::duration::parse_us(text)
        .map(std::time::Duration::from_micros)
        .ok_or_else(|| {
            SetupError::Other(format!(
                "--metrics-linger {text}: expected a duration, like 3s or 500ms"
            ))
        })?;
    if args.metrics_listen.is_none() && !linger.is_zero() {
        return Err(SetupError::Other(format!(
            "--metrics-linger {text}: there is no endpoint to keep; give --metrics-listen too"
        )));
    }
    Ok(linger)
}
