//! The inverse of planning: a run's options with every setting its plan resolved (defaults
//! filled in, the load named once), what `--print-config` prints and `--preset` reads back
//! into the same plan.

use gatebench_shared::duration::format_us;

use crate::generator::plan::{Plan, DEFAULT_MAX_TOKENS, DEFAULT_MODEL};
use crate::generator::rate_curve::RateCurve;
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::options::{LoadArgs, RequestFlags};

fn micros(d: std::time::Duration) -> String {
    format_us(d.as_micros() as u64)
}

impl LoadArgs {
    /// `self` with every setting `plan` resolved.
    pub fn resolved(&self, plan: &Plan) -> LoadArgs {
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
        let duration = match (plan.duration, plan.requests) {
            (Some(d), _) => Some(micros(d)),
            (None, None) => Some("forever".into()),
            (None, Some(_)) => None,
        };
        // A ramp and a trace bring their own rate and duration: the options' stand.
        let (rate, arrival, duration) = match plan.pace {
            RateCurve::Steady => (rate, arrival, duration),
            RateCurve::Stages(_) => (self.rate.clone(), arrival, None),
            RateCurve::Trace(_) => (None, None, self.duration.clone()),
        };
        LoadArgs {
            preset: None,
            rate,
            arrival,
            concurrency,
            requests: plan.requests,
            duration,
            warmup: Some(micros(plan.warmup)),
            connections: Some(plan.connections),
            threads: Some(plan.threads),
            http2: plan.transport.http2,
            cacert: plan.transport.cacert.clone(),
            insecure: plan.transport.insecure,
            grace: plan.grace.map(micros),
            max_pending: Some(plan.max_pending),
            spin: Some(plan.spin.describe()),
            poll_budget: Some(plan.poll_budget.to_string()),
            shard: (plan.shard.count > 1).then(|| plan.shard.to_string()),
            request: self.resolved_request(plan),
            ..self.clone()
        }
    }

    /// The request options `plan` resolved: a scenario's model and output tokens are named
    /// only where a scenario makes the bodies.
    fn resolved_request(&self, plan: &Plan) -> RequestFlags {
        let given = &self.request;
        let scenario_body = given.body.is_none() && plan.corpus.is_none();
        RequestFlags {
            cores: (!plan.cores.is_empty()).then(|| {
                let cores: Vec<String> = plan.cores.iter().map(usize::to_string).collect();
                cores.join(",")
            }),
            scenario: if plan.corpus.is_some() {
                given.scenario.clone()
            } else {
                scenario_body.then(|| plan.request.scenario.clone())
            },
            model: (scenario_body || self.trace.is_some())
                .then(|| given.model.as_deref().unwrap_or(DEFAULT_MODEL).to_string()),
            max_tokens: scenario_body.then(|| given.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
            timeout: Some(micros(plan.timeout)),
            seed: Some(plan.seed),
            ..given.clone()
        }
    }
}
