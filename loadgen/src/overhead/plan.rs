//! Options of `loadgen overhead` (flags or a TOML profile) and the plan they validate into.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::gateways::{min_effect_us, named_targets, with_twin, Disclosed, Named};
use crate::plan::{positive_duration, request_spec, PlanError, RequestSpec};

/// Options of `loadgen overhead`. Every option is also a key of the `--profile` TOML file
/// (kebab-case, like the flag); flags win over the profile.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OverheadArgs {
    /// TOML profile with any of these options.
    #[arg(long, env = "LOADGEN_PROFILE")]
    #[serde(skip)]
    pub profile: Option<PathBuf>,
    /// URL of the upstream called directly, like http://127.0.0.1:8080/v1/chat/completions.
    #[arg(long)]
    pub direct: Option<String>,
    /// A gateway in front of the same upstream: NAME=URL (repeatable).
    #[arg(long = "gateway")]
    #[serde(default, rename = "gateway")]
    pub gateways: Vec<String>,
    /// What to disclose about a gateway: NAME=TEXT, like litellm="1.55.2, logging off"
    /// (repeatable).
    #[arg(long = "gateway-info")]
    #[serde(default, rename = "gateway-info")]
    pub gateway_info: Vec<String>,
    /// How much a gateway records of each call: NAME=off, NAME=defaults or NAME=full
    /// (repeatable). Named in the result and the reports.
    #[arg(long = "gateway-recording")]
    #[serde(default, rename = "gateway-recording")]
    pub gateway_recording: Vec<String>,
    /// The A/A control, called in the same rounds as a row of its own: a second upstream that
    /// should be identical to direct (another mock process, or the upstream through a no-op
    /// hop), or `none`. Default: the direct URL again, on its own connections. A gateway is
    /// called different only when it differs from the twin; the twin's interval is the
    /// resolution of the setup.
    #[arg(long)]
    pub twin: Option<String>,
    /// Differences smaller than this are not resolved, like 5us (with `--twin none`, the only
    /// floor; with a twin, the floor under the twin's). Default 0.
    #[arg(long)]
    pub min_effect: Option<String>,
    /// Measured rounds per trial (each calls every target once). Default 50.
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Rounds before the measured ones, not counted. Default 5.
    #[arg(long)]
    pub warmup_rounds: Option<usize>,
    /// Independent trials, each with its own connections and interval. Default 10: the verdict
    /// is a t test over trials, which with 3 has 2 degrees of freedom and misses a 20 µs
    /// gateway once adjusted for a table of six rows (BENCHMARKS.md).
    #[arg(long)]
    pub trials: Option<usize>,
    /// Pause between rounds, like 10ms. Default 0 (each round starts when the last ends).
    #[arg(long)]
    pub round_gap: Option<String>,
    /// Scenarios, comma-separated: chat, chat-stream. Default both.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Request body instead of a scenario's: @FILE or literal JSON.
    #[arg(long)]
    pub body: Option<String>,
    /// Extra request header, `Name: value` (repeatable).
    #[arg(long = "header")]
    #[serde(default, rename = "header")]
    pub headers: Vec<String>,
    /// Model named in scenario bodies. Default gpt-4o-mini.
    #[arg(long)]
    pub model: Option<String>,
    /// Output tokens asked for in scenario bodies (max_tokens). Default 16.
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// Time a call may take, connect included, like 30s. Default 30s.
    #[arg(long)]
    pub timeout: Option<String>,
    /// Seed of the round order and of the bootstrap. Default 0.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Bootstrap resamples per interval. Default 10000.
    #[arg(long)]
    pub resamples: Option<usize>,
    /// Core to pin the client to, like 0. Default: not pinned.
    #[arg(long)]
    pub pin: Option<usize>,
    /// Wait for responses asleep instead of busy-polling. Busy-polling (the default) keeps the
    /// client's own wake-up time out of the figures: a thread that sleeps longer wakes slower
    /// (on virtual machines by tens of microseconds), which would count against the slower
    /// target.
    #[arg(long)]
    #[serde(default)]
    pub no_spin: bool,
    /// Split the overhead into the request leg (send to the mock's receipt) and the response
    /// leg (the mock's answer to receipt), from timestamps the mock returns when asked
    /// (x-mock-timestamps). Needs the mock on this host, and a gateway that forwards the
    /// request header and the response headers.
    #[arg(long)]
    #[serde(default)]
    pub attribute: bool,
    /// Sample a process (and its children) or a cgroup every 250 ms: NAME=PID or
    /// NAME=cgroup:PATH (repeatable).
    #[arg(long = "sample-pid")]
    #[serde(default, rename = "sample-pid")]
    pub sample: Vec<String>,
    /// Write the JSON result here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress line, even on a terminal.
    #[arg(long)]
    #[serde(default)]
    pub quiet: bool,
}

impl OverheadArgs {
    /// Options from `self` (flags) win over those of `profile`.
    pub fn over(self, p: OverheadArgs) -> OverheadArgs {
        let or_vec = |a: Vec<String>, b: Vec<String>| if a.is_empty() { b } else { a };
        OverheadArgs {
            profile: self.profile,
            direct: self.direct.or(p.direct),
            gateways: or_vec(self.gateways, p.gateways),
            gateway_info: or_vec(self.gateway_info, p.gateway_info),
            gateway_recording: or_vec(self.gateway_recording, p.gateway_recording),
            twin: self.twin.or(p.twin),
            min_effect: self.min_effect.or(p.min_effect),
            rounds: self.rounds.or(p.rounds),
            warmup_rounds: self.warmup_rounds.or(p.warmup_rounds),
            trials: self.trials.or(p.trials),
            round_gap: self.round_gap.or(p.round_gap),
            scenario: self.scenario.or(p.scenario),
            body: self.body.or(p.body),
            headers: crate::cli::merge_headers(p.headers, self.headers),
            model: self.model.or(p.model),
            max_tokens: self.max_tokens.or(p.max_tokens),
            timeout: self.timeout.or(p.timeout),
            seed: self.seed.or(p.seed),
            resamples: self.resamples.or(p.resamples),
            pin: self.pin.or(p.pin),
            no_spin: self.no_spin || p.no_spin,
            attribute: self.attribute || p.attribute,
            sample: or_vec(self.sample, p.sample),
            out: self.out.or(p.out),
            quiet: self.quiet || p.quiet,
        }
    }
}

/// A validated `loadgen overhead`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OverheadPlan {
    /// The direct target first, then the twin (when there is one), then the gateways.
    pub targets: Vec<Named>,
    /// The second target is the twin (`--twin`), the A/A control.
    #[serde(default)]
    pub twin: bool,
    /// `--min-effect`, µs.
    #[serde(default)]
    pub min_effect_us: f64,
    pub rounds: usize,
    pub warmup_rounds: usize,
    pub trials: usize,
    #[serde(rename = "round_gap_us", with = "micros")]
    pub round_gap: Duration,
    /// One request per scenario, in order (not read back from a result file).
    #[serde(skip_deserializing)]
    pub requests: Vec<RequestSpec>,
    #[serde(rename = "timeout_us", with = "micros")]
    pub timeout: Duration,
    pub seed: u64,
    pub resamples: usize,
    pub confidence: f64,
    pub pin: Option<usize>,
    /// Busy-poll while waiting for each response.
    #[serde(default)]
    pub spin: bool,
    /// Ask the mock for its timestamps and split the overhead into request and response legs.
    #[serde(default)]
    pub attribute: bool,
    #[serde(skip)]
    pub out: Option<PathBuf>,
}

/// Durations as whole microseconds in results.
mod micros {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_micros() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_micros)
    }
}

/// Most rounds, trials and resamples accepted (bounds memory and time).
/// The name of the A/A control target.
pub use crate::gateways::TWIN;

const MAX_ROUNDS: usize = 1_000_000;
const MAX_TRIALS: usize = 1_000;
const MAX_RESAMPLES: usize = 1_000_000;

impl OverheadArgs {
    /// Validates every option, resolving targets.
    pub fn plan(self) -> Result<OverheadPlan, PlanError> {
        let disclosed = Disclosed {
            infos: &self.gateway_info,
            recordings: &self.gateway_recording,
        };
        let mut targets = named_targets(self.direct.as_deref(), &self.gateways, disclosed)?;
        let twin = with_twin(&mut targets, self.twin.as_deref(), self.direct.as_deref())?;
        let min_effect_us = min_effect_us(self.min_effect.as_deref())?;
        let scenarios: Vec<&str> = match (&self.body, self.scenario.as_deref()) {
            (Some(_), _) => vec!["body"],
            (None, Some(list)) => list.split(',').map(str::trim).collect(),
            (None, None) => vec!["chat", "chat-stream"],
        };
        let mut headers = self.headers.clone();
        if self.attribute {
            headers.push(format!("{}: 1", gatebench_shared::clock::TIMESTAMPS_HEADER));
        }
        let requests = scenarios
            .iter()
            .map(|s| {
                request_spec(
                    Some(s),
                    self.body.as_deref(),
                    &headers,
                    self.model.as_deref().unwrap_or(crate::plan::DEFAULT_MODEL),
                    self.max_tokens.unwrap_or(crate::plan::DEFAULT_MAX_TOKENS),
                )
            })
            .collect::<Result<_, _>>()?;
        let count = |name, n: Option<usize>, default, min, max| {
            let n = n.unwrap_or(default);
            if (min..=max).contains(&n) {
                Ok(n)
            } else {
                Err(PlanError::Range(name, n, min, max))
            }
        };
        let round_gap = match self.round_gap.as_deref() {
            Some(text) => gatebench_shared::latency::parse_duration_us(text)
                .map(Duration::from_micros)
                .ok_or_else(|| PlanError::Duration("--round-gap", text.to_string(), ""))?,
            None => Duration::ZERO,
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if let Some(core) = self.pin.filter(|&c| c >= cores) {
            return Err(PlanError::Pin(core.to_string(), cores));
        }
        Ok(OverheadPlan {
            targets,
            twin,
            min_effect_us,
            rounds: count("--rounds", self.rounds, 50, 2, MAX_ROUNDS)?,
            warmup_rounds: count("--warmup-rounds", self.warmup_rounds, 5, 0, MAX_ROUNDS)?,
            trials: count("--trials", self.trials, 10, 1, MAX_TRIALS)?,
            round_gap,
            requests,
            timeout: match self.timeout.as_deref() {
                Some(text) => positive_duration("--timeout", text, "")?,
                None => Duration::from_secs(30),
            },
            seed: self.seed.unwrap_or(0),
            resamples: count("--resamples", self.resamples, 10_000, 100, MAX_RESAMPLES)?,
            confidence: 0.95,
            pin: self.pin,
            spin: !self.no_spin,
            attribute: self.attribute,
            out: self.out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(gateways: &[&str]) -> OverheadArgs {
        OverheadArgs {
            direct: Some("http://127.0.0.1:9/v1/chat/completions".into()),
            gateways: gateways.iter().map(|g| g.to_string()).collect(),
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
        info.gateway_info = vec!["b=logging off".into()];
        assert!(message(info).contains("the name of a --gateway"));
        let mut rounds = args(&["a=http://127.0.0.1:1/"]);
        rounds.rounds = Some(1);
        assert!(message(rounds).contains("--rounds"));
    }

    #[test]
    fn gateway_info_is_attached() {
        let mut a = args(&["litellm=http://127.0.0.1:4000/v1/chat/completions"]);
        a.gateway_info = vec!["litellm=1.55.2, logging off".into()];
        let plan = a.plan().unwrap();
        assert_eq!(plan.targets[2].info.as_deref(), Some("1.55.2, logging off"));
    }
}
