//! Raw options validated into one immutable [`Plan`] before any load is sent.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gatebench_shared::duration::parse_us;
use gatebench_shared::wake::Spin;
use serde::Serialize;

use crate::generator::plan_error::PlanError;
use crate::generator::quantity::duration_us;

use crate::generator::corpus::Corpus;
use crate::generator::rate_curve::RateCurve;
use crate::model::load::Shard;
use crate::model::target::Target;
use crate::wire::target::RequestSpec;

use crate::model::load::Load;

/// A validated run.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Empty: the embedded mock and the demo.
    pub targets: Vec<Target>,
    pub load: Load,
    /// `None`: until Ctrl-C, or until `requests` are sent.
    #[serde(rename = "duration_us", serialize_with = "opt_duration_us")]
    pub duration: Option<Duration>,
    /// Closed loop: measured requests to send, then stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(rename = "warmup_us", serialize_with = "duration_us")]
    pub warmup: Duration,
    pub connections: usize,
    pub threads: usize,
    pub cores: Vec<usize>,
    pub request: RequestSpec,
    /// Many requests instead of `request` (`--requests-file`, or a trace's rows).
    #[serde(serialize_with = "crate::generator::corpus::as_summary")]
    pub corpus: Option<Arc<Corpus>>,
    /// Conversations instead of single requests (`--sessions`).
    #[serde(
        serialize_with = "crate::generator::sessions::plan::as_summary",
        skip_serializing_if = "Option::is_none"
    )]
    pub sessions: Option<Arc<crate::generator::sessions::plan::SessionPlan>>,
    /// How the open loop's rate goes over time (steady, `--stages`, `--trace`).
    pub pace: RateCurve,
    /// HTTP/1.1 or HTTP/2, the TLS settings and `--connect-to`.
    pub transport: crate::wire::transport::Transport,
    #[serde(rename = "timeout_us", serialize_with = "duration_us")]
    pub timeout: Duration,
    /// How long requests in flight may still finish once sending stops; `None`: each until its
    /// timeout.
    #[serde(rename = "grace_us", serialize_with = "opt_duration_us")]
    pub grace: Option<Duration>,
    /// Most requests the open loop holds waiting at once, across its workers; those due past
    /// it are counted `backlog`.
    pub max_pending: u64,
    /// How the pacer chooses its spin margin (`auto`, or a fixed margin like `50us`).
    #[serde(serialize_with = "spin_text")]
    pub spin: Spin,
    /// The fixed spin margin in µs, as results before `--spin auto` recorded it; `None` with
    /// `auto` (set from `spin` by the planner).
    pub spin_us: Option<u64>,
    /// Most cores the workers may spend polling for due answers (0: never).
    #[serde(rename = "poll_budget_cores")]
    pub poll_budget: f64,
    pub seed: u64,
    /// The part of the schedule this process sends (`0/1`: all of it).
    pub shard: Shard,
    /// When the schedule starts, by the wall clock (`--start-at`).
    #[serde(serialize_with = "opt_instant")]
    pub start_at: Option<SystemTime>,
    /// A gatebench mock whose clock this host's is measured against (`--clock-ref`).
    pub clock_ref: Option<Target>,
    #[serde(skip)]
    pub out: Option<PathBuf>,
    #[serde(skip)]
    pub hgrm: Option<PathBuf>,
    #[serde(skip)]
    pub hdr_log: Option<PathBuf>,
    pub max_error_rate: Option<f64>,
    #[serde(rename = "max_p99_us", serialize_with = "opt_duration_us")]
    pub max_p99: Option<Duration>,
    #[serde(skip)]
    pub quiet: bool,
    /// The upstream's `/metrics`, for the request count check.
    pub upstream_metrics: Option<Target>,
    /// Where each target's run adds its live counters, when a metrics endpoint serves them.
    #[serde(skip)]
    pub live: Option<Arc<crate::generator::live::Registry>>,
}

fn opt_instant<S: serde::Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_some(&crate::generator::start_at::format(*t)),
        None => s.serialize_none(),
    }
}

fn spin_text<S: serde::Serializer>(spin: &Spin, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&spin.describe())
}

/// The fixed margin of `spin` in µs, as a plan's `spin_us` records it (`None` with `auto`).
pub fn spin_us(spin: Spin) -> Option<u64> {
    match spin {
        Spin::Auto => None,
        Spin::Fixed(d) => Some(d.as_micros() as u64),
    }
}

fn opt_duration_us<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&(d.as_micros() as u64)),
        None => s.serialize_none(),
    }
}

/// Most requests an open loop holds waiting at once by default (`--max-pending`): at its rate,
/// a target that stops answering leaves `rate × timeout` of them open, each holding memory
/// until its timeout; past the cap a due request is counted `backlog` instead of sent.
pub(crate) const MAX_PENDING: u64 = 1_000_000;

/// Most connections or threads a plan may ask for.
pub(crate) const MAX_CONNECTIONS: usize = 100_000;
pub(crate) const MAX_THREADS: usize = 256;

/// The rate when none is given (the demo's own rates are in `crate::engine::run`).
pub const DEFAULT_RATE: f64 = 1_000.0;
/// The model scenario bodies name when `--model` is not given.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// The output tokens scenario bodies ask for when `--max-tokens` is not given.
pub const DEFAULT_MAX_TOKENS: u64 = 16;

impl Plan {
    /// The rate this process sends: its shard's share of the plan's (`None` in a closed loop).
    pub fn shard_rate(&self) -> Option<f64> {
        match self.load {
            Load::Open { rate, .. } => Some(rate / self.shard.count as f64),
            Load::Closed { .. } => None,
        }
    }
}

pub(crate) fn count(name: &'static str, n: usize, max: usize) -> Result<usize, PlanError> {
    if (1..=max).contains(&n) {
        Ok(n)
    } else {
        Err(PlanError::Count(name, n, max))
    }
}

pub(crate) fn positive_duration(
    name: &'static str,
    text: &str,
    also: &'static str,
) -> Result<Duration, PlanError> {
    parse_us(text)
        .filter(|us| *us > 0)
        .map(Duration::from_micros)
        .ok_or_else(|| PlanError::Duration(name, text.to_string(), also))
}

/// `--levels` as counts from 1 to 100,000 (`1,4,16` or `1, 4, 16`); `example` completes the
/// error message ("counts like …").
pub(crate) fn parse_counts(text: &str, example: &'static str) -> Result<Vec<usize>, PlanError> {
    text.split(',')
        .map(|l| {
            l.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=100_000).contains(n))
                .ok_or_else(|| PlanError::Named("--levels", text.to_string(), example))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::load::Arrival;
    use crate::options::{LoadArgs, RequestFlags};

    #[test]
    fn plans_validate_every_option() {
        let plan = LoadArgs {
            rate: Some("5k".into()),
            request: RequestFlags {
                scenario: Some("chat-stream".into()),
                headers: vec!["x-test: 1".into()],
                ..Default::default()
            },
            ..LoadArgs::default()
        }
        .plan()
        .unwrap();
        assert_eq!(
            plan.load,
            Load::Open {
                rate: 5000.0,
                arrival: Arrival::Constant
            }
        );
        assert!(plan.request.stream);
        assert_eq!(plan.duration, Some(Duration::from_secs(10)));
        let body: serde_json::Value = serde_json::from_slice(&plan.request.body).unwrap();
        assert_eq!(body["stream_options"]["include_usage"], true);

        let bad = [
            LoadArgs {
                rate: Some("5".into()),
                concurrency: Some(3),
                ..Default::default()
            },
            LoadArgs {
                duration: Some("0s".into()),
                ..Default::default()
            },
            LoadArgs {
                request: RequestFlags {
                    scenario: Some("embeddings".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
            LoadArgs {
                request: RequestFlags {
                    headers: vec!["no colon".into()],
                    ..Default::default()
                },
                ..Default::default()
            },
            LoadArgs {
                request: RequestFlags {
                    body: Some("[1]".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
            LoadArgs {
                connections: Some(0),
                ..Default::default()
            },
        ];
        for args in bad {
            assert!(args.clone().plan().is_err(), "{args:?}");
        }
    }
}
