//! The targets of every command that measures gateways against their upstream (`GatewayFlags`),
//! how a difference is judged against the A/A twin (`JudgeFlags`) and the pause between trials
//! (`SettleFlag`): declared once, flattened into each command that takes them.

use clap::Args;
use serde::{Deserialize, Serialize};

/// The upstream, the gateways in front of it, what to disclose about them and the processes
/// to sample. Every one is also a key of the `--preset` TOML file.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct GatewayFlags {
    /// URL of the upstream called directly, like http://127.0.0.1:8080/v1/chat/completions.
    #[arg(long)]
    pub direct: Option<String>,
    /// A gateway in front of the same upstream: NAME=URL (repeatable).
    #[arg(long = "gateway")]
    #[serde(default, rename = "gateway", deserialize_with = "one_or_many")]
    pub gateways: Vec<String>,
    /// What to disclose about a gateway: NAME=TEXT, like litellm="1.55.2, logging off"
    /// (repeatable).
    #[arg(long = "gateway-info")]
    #[serde(default, rename = "gateway-info", deserialize_with = "one_or_many")]
    pub gateway_info: Vec<String>,
    /// How much a gateway records of each call: NAME=off, NAME=defaults or NAME=full
    /// (repeatable). Named in the result and the reports.
    #[arg(long = "gateway-recording")]
    #[serde(
        default,
        rename = "gateway-recording",
        deserialize_with = "one_or_many"
    )]
    pub gateway_recording: Vec<String>,
    /// Sample a process (and its children) or a cgroup every 250 ms: NAME=PID or
    /// NAME=cgroup:PATH (repeatable). Reported as idle (a second before the load) and under load.
    #[arg(long = "sample-pid")]
    #[serde(default, rename = "sample-pid", deserialize_with = "one_or_many")]
    pub sample: Vec<String>,
}

/// How a difference is judged: the A/A twin, the smallest effect resolved, the trials. Every
/// one is also a key of the `--preset` TOML file.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct JudgeFlags {
    /// The A/A control, measured as a target of its own (compare: in every trial; overhead: in
    /// the same rounds): a second upstream that should be identical to direct (another mock
    /// process, or the upstream through a no-op hop), or `none`. Default for `compare`,
    /// `overhead` and `profile` with --direct: when direct is a gatebench mock on loopback, a
    /// second mock process loadgen starts with its configuration (the `mock-upstream` beside
    /// loadgen, else on PATH) and stops at the end; otherwise the direct URL again (the same
    /// process, no spread between processes), said in the result. `sweep` runs one only when
    /// given. A gateway is called different (at a percentile) only when it differs from the
    /// twin there; the twin's interval is the resolution of the setup.
    #[arg(long)]
    pub twin: Option<String>,
    /// Differences smaller than this are not resolved, like 20us (with `--twin none`, the only
    /// floor; with a twin, the floor under the twin's). Default 0.
    #[arg(long)]
    pub min_effect: Option<String>,
    /// Independent trials per target, each with its own connections (compare: alternating
    /// direct and gateways). Default 5 (sweep and profile: 3; overhead: 10, since its verdict
    /// is a t test over trials, which with 3 has 2 degrees of freedom and misses a 20 µs
    /// gateway once adjusted for a table of six rows, BENCHMARKS.md).
    #[arg(long)]
    pub trials: Option<usize>,
}

/// The pause between trials (or ladder rungs). A key of the `--preset` TOML file too.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct SettleFlag {
    /// Pause before each trial (or ladder rung) after the first, like 20s, so work a target
    /// left queued when its trial ended (an overloaded gateway draining its backlog) does not
    /// load the machine while the next target is measured. Default 0 (1s for ladder).
    #[arg(long)]
    pub settle: Option<String>,
}

/// A preset's list of texts, or one text standing for a list of one.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(text) => vec![text],
        OneOrMany::Many(texts) => texts,
    })
}
