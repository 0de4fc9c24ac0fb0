//! Options of `loadgen overhead`: every one a flag and a preset key; flags win over the preset.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::{GatewayFlags, JudgeFlags, RequestFlags};

/// Options of `loadgen overhead`. Every option is also a key of the `--preset` TOML file
/// (kebab-case, like the flag); flags win over the preset.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OverheadArgs {
    /// A preset: a TOML file with any of these options (kebab-case keys; flags win over it).
    /// `--profile` and `LOADGEN_PROFILE`, its former names, are still read.
    #[arg(long, alias = "profile", env = "LOADGEN_PRESET", value_name = "FILE")]
    #[serde(skip)]
    pub preset: Option<PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub targets: GatewayFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub judge: JudgeFlags,
    /// Measured rounds per trial (each calls every target once). Default 50.
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Rounds before the measured ones, not counted. Default 5.
    #[arg(long)]
    pub warmup_rounds: Option<usize>,
    /// Pause between rounds, like 10ms. Default 0 (each round starts when the last ends).
    #[arg(long)]
    pub round_gap: Option<String>,
    /// Bootstrap resamples per interval. Default 10000.
    #[arg(long)]
    pub resamples: Option<usize>,
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
    /// Write the JSON result here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress line, even on a terminal.
    #[arg(long)]
    #[serde(default)]
    pub quiet: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub request: RequestFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub conversations: super::SessionFlags,
}
