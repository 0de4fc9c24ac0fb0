//! Options of `loadgen ladder`: the levels, over those of `compare`.

use clap::Args;

use super::CompareArgs;

/// The levels when none are given.
pub const DEFAULT_LEVELS: &str = "10,100,250,500,1000";

/// Options of `loadgen ladder`: the targets and request options of `loadgen compare`, and the
/// levels.
#[derive(Debug, Clone, Default, Args)]
pub struct LadderArgs {
    /// Simultaneous streams per level, comma-separated. Default 10,100,250,500,1000.
    #[arg(long)]
    pub levels: Option<String>,
    #[command(flatten)]
    pub compare: CompareArgs,
}
