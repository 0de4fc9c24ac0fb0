//! The plan `loadgen overhead`'s options validate into.

use std::time::Duration;

use crate::options::OverheadArgs;

use crate::engine::comparison::disclosed;
use crate::engine::gateways::{min_effect_us, named_targets, with_twin};
use crate::generator::plan::{positive_duration, DEFAULT_MAX_TOKENS, DEFAULT_MODEL};
use crate::generator::plan_error::PlanError;
use crate::model::target::Named;
/// The plan with its requests encoded, ready to send.
pub(crate) type OverheadPlan = crate::results::overhead::OverheadPlan<RequestSpec>;
use crate::wire::target::{request_spec, RequestSpec};

/// Most rounds, trials and resamples accepted (bounds memory and time).
const MAX_ROUNDS: usize = 1_000_000;
const MAX_TRIALS: usize = 1_000;
const MAX_RESAMPLES: usize = 1_000_000;

impl OverheadArgs {
    /// Validates every option, resolving targets.
    pub fn plan(self) -> Result<OverheadPlan, PlanError> {
        let flags = &self.targets;
        let mut targets = named_targets(
            flags.direct.as_deref(),
            &flags.gateways,
            disclosed(flags),
            &[],
        )?;
        let twin = with_twin(
            &mut targets,
            self.judge.twin.as_deref(),
            flags.direct.as_deref(),
            &[],
        )?;
        let min_effect_us = min_effect_us(self.judge.min_effect.as_deref())?;
        let requests = self.requests(&targets)?;
        let round_gap = match self.round_gap.as_deref() {
            Some(text) => gatebench_shared::duration::parse_us(text)
                .map(Duration::from_micros)
                .ok_or_else(|| PlanError::Duration("--round-gap", text.to_string(), ""))?,
            None => Duration::ZERO,
        };
        let r = &self.request;
        Ok(OverheadPlan {
            targets,
            twin,
            min_effect_us,
            rounds: count("--rounds", self.rounds, 50, 2, MAX_ROUNDS)?,
            warmup_rounds: count("--warmup-rounds", self.warmup_rounds, 5, 0, MAX_ROUNDS)?,
            trials: count("--trials", self.judge.trials, 10, 1, MAX_TRIALS)?,
            round_gap,
            requests,
            timeout: match r.timeout.as_deref() {
                Some(text) => positive_duration("--timeout", text, "")?,
                None => Duration::from_secs(30),
            },
            seed: r.seed.unwrap_or(0),
            resamples: count("--resamples", self.resamples, 10_000, 100, MAX_RESAMPLES)?,
            confidence: 0.95,
            core: one_core(r.cores.as_deref())?,
            spin: !self.no_spin,
            attribute: self.attribute,
            out: self.out,
        })
    }

    /// One request per scenario (or the body), for every target.
    fn requests(&self, targets: &[Named]) -> Result<Vec<RequestSpec>, PlanError> {
        let r = &self.request;
        let scenarios: Vec<&str> = match (&r.body, r.scenario.as_deref()) {
            (Some(_), _) => vec!["body"],
            (None, Some(list)) => list.split(',').map(str::trim).collect(),
            (None, None) => vec!["chat", "chat-stream"],
        };
        let mut headers = r.headers.clone();
        if self.attribute {
            headers.push(format!("{}: 1", gatebench_shared::clock::TIMESTAMPS_HEADER));
        }
        let urls: Vec<&str> = targets.iter().map(|t| t.target.url.as_str()).collect();
        let model = r.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let max_tokens = r.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        Ok(scenarios
            .iter()
            .map(|s| {
                request_spec(
                    Some(s),
                    r.body.as_deref(),
                    &headers,
                    model,
                    max_tokens,
                    &urls,
                )
            })
            .collect::<Result<_, _>>()?)
    }
}

/// `n`, or `default`, within `min..=max`.
fn count(
    name: &'static str,
    n: Option<usize>,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, PlanError> {
    let n = n.unwrap_or(default);
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(PlanError::Range(name, n, min, max))
    }
}

/// `--cores`: the one core of the client, below the cores here.
fn one_core(text: Option<&str>) -> Result<Option<usize>, PlanError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let Some(text) = text else {
        return Ok(None);
    };
    match text.trim().parse::<usize>() {
        Ok(core) if core < cores => Ok(Some(core)),
        _ => Err(PlanError::Cores(text.to_string(), cores)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::GatewayFlags;

    fn args(gateways: &[&str]) -> OverheadArgs {
        OverheadArgs {
            targets: GatewayFlags {
                direct: Some("http://127.0.0.1:9/v1/chat/completions".into()),
                gateways: gateways.iter().map(|g| g.to_string()).collect(),
                ..GatewayFlags::default()
            },
            ..OverheadArgs::default()
        }
    }

    #[test]
    fn defaults_follow_the_paired_method() {
        let plan = args(&["nginx=http://127.0.0.1:10/v1/chat/completions"])
            .plan()
            .unwrap();
        assert_eq!((plan.rounds, plan.warmup_rounds, plan.trials), (50, 5, 10));
        assert_eq!(plan.resamples, 10_000);
        let names: Vec<_> = plan.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["direct", "twin", "nginx"]);
        assert!(plan.twin);
        let scenarios: Vec<_> = plan.requests.iter().map(|r| r.scenario.as_str()).collect();
        assert_eq!(scenarios, ["chat", "chat-stream"]);
    }

    #[test]
    fn bad_options_say_what_was_expected() {
        let message = |a: OverheadArgs| a.plan().unwrap_err().to_string();
        assert!(message(args(&[])).contains("--gateway NAME=URL"));
        assert!(message(OverheadArgs::default()).contains("--direct"));
        assert!(message(args(&["no-equals"])).contains("NAME=VALUE"));
        assert!(message(args(&["direct=http://127.0.0.1:1/"])).contains("NAME=VALUE"));
        assert!(
            message(args(&["a=http://127.0.0.1:1/", "a=http://127.0.0.1:2/"]))
                .contains("each name once")
        );
        let mut info = args(&["a=http://127.0.0.1:1/"]);
        info.targets.gateway_info = vec!["b=logging off".into()];
        assert!(message(info).contains("the name of a --gateway"));
        let mut rounds = args(&["a=http://127.0.0.1:1/"]);
        rounds.rounds = Some(1);
        assert!(message(rounds).contains("--rounds"));
    }

    #[test]
    fn gateway_info_is_attached() {
        let mut a = args(&["litellm=http://127.0.0.1:4000/v1/chat/completions"]);
        a.targets.gateway_info = vec!["litellm=1.55.2, logging off".into()];
        let plan = a.plan().unwrap();
        assert_eq!(plan.targets[2].info.as_deref(), Some("1.55.2, logging off"));
    }
}
