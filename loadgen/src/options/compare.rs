//! Options of `loadgen compare` (and of `sweep` and `profile`, which flatten them): the targets,
//! how a difference is judged and the settle, over the load options of `loadgen run`.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::{GatewayFlags, JudgeFlags, LoadArgs, SettleFlag};

/// Trials per target when `--trials` is not given.
pub const DEFAULT_TRIALS: usize = 5;

/// Options of `loadgen compare`: the targets and trials, and every option of `loadgen run`
/// (the load each trial sends). In a `--preset` file the keys are the flags' names.
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct CompareArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub targets: GatewayFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub judge: JudgeFlags,
    #[command(flatten)]
    #[serde(flatten)]
    pub pause: SettleFlag,
    #[command(flatten)]
    #[serde(flatten)]
    pub load: LoadArgs,
}
