//! Options of `loadgen compare` (and the comparison part of `sweep` and `ladder`): the targets,
//! trials and settle, over the load options of `loadgen run`.

use clap::Args;

use super::RunArgs;

/// Trials per target when `--trials` is not given.
pub const DEFAULT_TRIALS: usize = 5;

/// Options of `loadgen compare`: the targets and trials, and every option of `loadgen run`
/// (the load each trial sends). In a `--profile` file the keys are the flags' names.
#[derive(Debug, Clone, Default, Args)]
pub struct CompareArgs {
    /// URL of the upstream called directly.
    #[arg(long)]
    pub direct: Option<String>,
    /// A gateway in front of the same upstream: NAME=URL (repeatable).
    #[arg(long = "gateway")]
    pub gateways: Vec<String>,
    /// What to disclose about a gateway: NAME=TEXT (repeatable).
    #[arg(long = "gateway-info")]
    pub gateway_info: Vec<String>,
    /// How much a gateway records of each call: NAME=off, NAME=defaults or NAME=full
    /// (repeatable). Named in the result and the reports.
    #[arg(long = "gateway-recording")]
    pub gateway_recording: Vec<String>,
    /// Trials per target, alternating direct and gateways. Default 5.
    #[arg(long)]
    pub trials: Option<usize>,
    /// The A/A control, run in every trial as a target of its own: a second upstream that
    /// should be identical to direct, or `none`. Default for `compare`: the direct URL again
    /// (its own trial, its own connections); `sweep` runs one only when given. A gateway is
    /// called different at a percentile only when it differs from the twin there; the twin's
    /// interval is the resolution.
    #[arg(long)]
    pub twin: Option<String>,
    /// Differences smaller than this are not resolved, like 20us (with `--twin none`, the only
    /// floor; with a twin, the floor under the twin's). Default 0.
    #[arg(long)]
    pub min_effect: Option<String>,
    /// Sample a process (and its children) or a cgroup every 250 ms: NAME=PID or
    /// NAME=cgroup:PATH (repeatable). Reported as idle (a second before the load) and under load.
    #[arg(long = "sample-pid")]
    pub sample: Vec<String>,
    /// Pause before each trial (or ladder rung) after the first, like 20s, so work a target
    /// left queued when its trial ended (an overloaded gateway draining its backlog) does not
    /// load the machine while the next target is measured. Default 0 (1s for ladder).
    #[arg(long)]
    pub settle: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}
