//! The bounds and checks of a run beyond its load: the shard and the start instant, the
//! pending-request bound, the spin and the answer-polling budget, the thresholds, the cores,
//! threads and connections.

use std::time::{Duration, SystemTime};

use gatebench_shared::wake::Spin;

use crate::generator::plan::{count, positive_duration, MAX_CONNECTIONS, MAX_PENDING, MAX_THREADS};
use crate::generator::plan_error::PlanError;
use crate::model::load::Load;
use crate::model::load::Shard;
use crate::options::LoadArgs;

/// A run's bounds, checked.
#[derive(Debug)]
pub(super) struct Limits {
    pub shard: Shard,
    pub start_at: Option<SystemTime>,
    pub max_pending: u64,
    pub spin: Spin,
    pub poll_budget: f64,
    pub max_p99: Option<Duration>,
    pub cores: Vec<usize>,
    pub threads: usize,
    pub connections: usize,
}

/// The bounds of `args`, at `load`.
pub(super) fn limits(args: &LoadArgs, load: &Load) -> Result<Limits, PlanError> {
    let shard = shard(args, load)?;
    let start_at = args
        .start_at
        .as_deref()
        .map(|t| {
            crate::generator::start_at::parse(t).ok_or_else(|| PlanError::StartAt(t.to_string()))
        })
        .transpose()?;
    let max_pending = match args.max_pending {
        Some(0) => return Err(PlanError::MaxPending),
        Some(n) => n,
        None => MAX_PENDING,
    };
    let spin = match args.spin.as_deref() {
        Some(text) => Spin::parse(text).ok_or_else(|| {
            PlanError::Named(
                "--spin",
                text.to_string(),
                "auto, 0 (never spin) or a duration like 50us or 1ms",
            )
        })?,
        None => Spin::Auto,
    };
    let poll_budget = poll_budget(args.poll_budget.as_deref())?;
    let max_p99 = args
        .max_p99
        .as_deref()
        .map(|t| positive_duration("--max-p99", t, ""))
        .transpose()?;
    if let Some(rate) = args.max_error_rate {
        if !(0.0..=1.0).contains(&rate) {
            return Err(PlanError::ErrorRate(rate));
        }
    }
    let here = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cores = match &args.request.cores {
        Some(text) => gatebench_shared::host::parse_cores(text, here)
            .ok_or_else(|| PlanError::Cores(text.clone(), here))?,
        None => Vec::new(),
    };
    Ok(Limits {
        shard,
        start_at,
        max_pending,
        spin,
        poll_budget,
        max_p99,
        cores,
        threads: count("--threads", args.threads.unwrap_or(1), MAX_THREADS)?,
        connections: count(
            "--connections",
            args.connections.unwrap_or(256),
            MAX_CONNECTIONS,
        )?,
    })
}

/// Most cores a run may spend polling for due answers when `--poll-budget` is not given.
pub(crate) const DEFAULT_POLL_BUDGET: f64 = 1.0;
/// Most cores `--poll-budget` may name.
const MAX_POLL_BUDGET: f64 = crate::generator::plan::MAX_THREADS as f64;

/// `--poll-budget`: a number of cores, 0 (no polling) or more.
fn poll_budget(text: Option<&str>) -> Result<f64, PlanError> {
    let Some(text) = text else {
        return Ok(DEFAULT_POLL_BUDGET);
    };
    match text.trim().parse::<f64>() {
        Ok(cores) if (0.0..=MAX_POLL_BUDGET).contains(&cores) => Ok(cores),
        _ => Err(PlanError::Named(
            "--poll-budget",
            text.to_string(),
            "a number of cores like 0.5 or 1 (0: never poll for answers)",
        )),
    }
}

/// `--shard`, checked against what a shard cannot go with.
fn shard(args: &LoadArgs, load: &Load) -> Result<Shard, PlanError> {
    let shard = match args.shard.as_deref() {
        Some(text) => Shard::parse(text).ok_or_else(|| PlanError::Shard(text.to_string()))?,
        None => Shard::WHOLE,
    };
    if shard.count > 1 {
        if let Load::Closed { .. } = load {
            return Err(PlanError::ShardClosed);
        }
        if args.upstream_metrics.is_some() {
            return Err(PlanError::ShardUpstream);
        }
    }
    Ok(shard)
}
