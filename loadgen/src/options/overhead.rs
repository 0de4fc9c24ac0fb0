//! Options of `loadgen overhead`: every one a flag and a profile key; flags win over the profile.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

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
            headers: super::run::merge_headers(p.headers, self.headers),
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
