//! Options of `loadgen ladder`: the levels, over the targets, the settle and the load options
//! of `compare` (a ladder judges no difference: it takes no twin, floor or trials).

use clap::Args;
use serde::{Deserialize, Serialize};

use super::{GatewayFlags, LoadArgs, SettleFlag};

/// The levels when none are given.
pub const DEFAULT_LEVELS: &str = "10,100,250,500,1000";

/// Options of `loadgen ladder`: the targets and request options of `loadgen compare`, and the
/// levels.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct LadderArgs {
    /// Simultaneous streams per level, comma-separated. Default 10,100,250,500,1000.
    #[arg(long)]
    #[serde(default, deserialize_with = "super::preset::text_or_list")]
    pub levels: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub targets: GatewayFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub pause: SettleFlag,
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,
}
