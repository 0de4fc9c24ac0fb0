//! What a perf profile and a memory profile share: the targets reached before any load, every
//! trial run with the profiled runs' windows handed to their profiler, and the one result both
//! are assembled into.

use gatebench_shared::host::OpenFileLimit;

use crate::engine::comparison::{run_trials_watched, Comparison, Ran};
use crate::engine::run::{stop_flag, Window, EXIT_FAILED, EXIT_OK};
use crate::engine::sampler::Sampling;
use crate::engine::twin::{reach, MockProcess};
use crate::generator::plan::Plan;
use crate::model::target::Named;
use crate::results::compare::{CompareResult, TrialRun};
use crate::results::cost::CostModel;
use crate::results::envelope::Envelope;
use crate::results::memory::MemoryProfile;
use crate::results::profile::{Profile, ProfileResult, SCHEMA};
use crate::results::resources::ResourceReport;

use super::analyse;

/// A profile's targets reached, before any load.
pub(super) struct Start {
    started_at: String,
    mock: Option<String>,
    open_files: Option<OpenFileLimit>,
    /// The twin loadgen started, if any: it runs until the result is assembled.
    _twin: Option<MockProcess>,
}

impl Start {
    /// Reaches `comparison`'s targets (starting the twin when one is needed) and raises the
    /// open-file limit to what `plan` needs.
    pub(super) fn new(comparison: &mut Comparison, plan: &Plan) -> anyhow::Result<Start> {
        let started_at =
            humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let (mock, twin) = reach(&mut comparison.targets, plan.timeout)?;
        let open_files = gatebench_shared::host::raise_open_file_limit().ok();
        crate::engine::run::check_open_files(plan, open_files.as_ref())?;
        Ok(Start {
            started_at,
            mock,
            open_files,
            _twin: twin,
        })
    }
}

/// Every trial of every target, with the processes' resources.
pub(super) struct Trials {
    pub runs: Vec<TrialRun>,
    pub resources: Vec<ResourceReport>,
    /// Stopped before every trial ran.
    pub interrupted: bool,
}

/// Runs every trial of `c`'s targets, each target's window edges handed to `watch`.
pub(super) fn run(plan: &Plan, c: &Comparison, watch: &mut dyn FnMut(&Named, Window)) -> Trials {
    let stop = stop_flag();
    let sampling = Sampling::start(c.samples.clone());
    let runs = run_trials_watched(plan, &c.targets, c.trials, c.settle, "", watch);
    let resources = sampling.finish();
    Trials {
        runs,
        resources,
        interrupted: stop.stop.load(std::sync::atomic::Ordering::Relaxed),
    }
}

/// What the profiler found, for the result.
pub(super) struct Found {
    pub profile: Profile,
    pub memory: Option<MemoryProfile>,
    pub cost_model: Option<CostModel>,
}

/// The profile's result, judged as `compare` judges its trials, with the exit code it earns:
/// a failure when any run was invalid.
pub(super) fn result(
    start: Start,
    command: Vec<String>,
    plan: Plan,
    comparison: Comparison,
    trials: Trials,
    found: Found,
) -> (ProfileResult, u8) {
    let c = &comparison;
    let (summary, deltas, profiler_cost) =
        analyse(&c.targets, &trials.runs, c.twin, c.min_effect_us);
    let envelope = Envelope::new(SCHEMA, command, start.started_at, start.open_files);
    let ran = Ran {
        turn_deltas: Vec::new(),
        runs: trials.runs,
        summary,
        deltas,
        resources: trials.resources,
        interrupted: trials.interrupted,
    };
    let result = ProfileResult {
        compare: CompareResult::judged(envelope, plan, comparison, start.mock, ran),
        profile: found.profile,
        profiler_cost,
        memory: found.memory,
        cost_model: found.cost_model,
    };
    let code = if result.compare.footer.valid {
        EXIT_OK
    } else {
        EXIT_FAILED
    };
    (result, code)
}
