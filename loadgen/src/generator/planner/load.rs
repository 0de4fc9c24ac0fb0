//! A run's load and its times: open or closed loop (a command may set it), the count or the
//! measured duration, the warm-up, the timeout and the grace after sending stops.

use std::time::Duration;

use gatebench_shared::duration::parse_us;

use crate::generator::plan::{count, positive_duration, DEFAULT_RATE, MAX_CONNECTIONS};
use crate::generator::plan_error::PlanError;
use crate::generator::quantity::parse_rate;
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::options::LoadArgs;

/// The load and the times of a run, checked.
#[derive(Debug)]
pub(super) struct Timing {
    pub load: Load,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub warmup: Duration,
    pub timeout: Duration,
    pub grace: Option<Duration>,
}

/// The load of `args`, or `load` when a command sets it, with the run's times.
pub(super) fn timing(args: &LoadArgs, load: Option<Load>) -> Result<Timing, PlanError> {
    let load = load_of(args, load)?;
    let requests = match (args.requests, &load, &args.duration) {
        (None, ..) => None,
        (Some(n), Load::Closed { .. }, None) if n > 0 => Some(n),
        _ => return Err(PlanError::Requests),
    };
    let duration = match args.duration.as_deref() {
        _ if requests.is_some() => None,
        Some("forever") => None,
        Some(text) => Some(positive_duration("--duration", text, " or forever")?),
        None => Some(Duration::from_secs(10)),
    };
    let warmup = match args.warmup.as_deref() {
        Some(text) => any_duration("--warmup", text)?,
        None => Duration::ZERO,
    };
    let timeout = match args.request.timeout.as_deref() {
        Some(text) => positive_duration("--timeout", text, "")?,
        None => Duration::from_secs(30),
    };
    let grace = args
        .grace
        .as_deref()
        .map(|text| any_duration("--grace", text))
        .transpose()?;
    Ok(Timing {
        load,
        requests,
        duration,
        warmup,
        timeout,
        grace,
    })
}

/// The options' load, or `given` (at the options' arrival process when it is a rate).
fn load_of(args: &LoadArgs, given: Option<Load>) -> Result<Load, PlanError> {
    let arrival = match args.arrival.as_deref().unwrap_or("constant") {
        "constant" => Arrival::Constant,
        "poisson" => Arrival::Poisson,
        other => return Err(PlanError::Arrival(other.to_string())),
    };
    Ok(match (given, args.rate.as_deref(), args.concurrency) {
        (_, Some(_), Some(_)) => return Err(PlanError::RateAndConcurrency),
        (Some(Load::Closed { concurrency }), ..) | (None, None, Some(concurrency)) => {
            Load::Closed {
                concurrency: count("--concurrency", concurrency, MAX_CONNECTIONS)?,
            }
        }
        // The options' arrival process at the given rate.
        (Some(Load::Open { rate, .. }), ..) => Load::Open { rate, arrival },
        (None, rate, None) => Load::Open {
            rate: match rate {
                Some(text) => parse_rate(text)?,
                None => DEFAULT_RATE,
            },
            arrival,
        },
    })
}

/// A duration of `flag` that may be zero.
pub(super) fn any_duration(flag: &'static str, text: &str) -> Result<Duration, PlanError> {
    parse_us(text)
        .map(Duration::from_micros)
        .ok_or_else(|| PlanError::Duration(flag, text.to_string(), ""))
}
