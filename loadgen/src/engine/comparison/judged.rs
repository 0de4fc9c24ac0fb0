//! A comparison's result: what its trials gave (`Ran`), judged into a `CompareResult`, and why
//! trials were invalid.

use crate::generator::plan::Plan;
use crate::results::compare::{CompareResult, PercentileDelta, TargetSummary, TrialRun};
use crate::results::comparison::ComparisonFooter;
use crate::results::resources::ResourceReport;

use super::Comparison;

/// What a comparison's trials gave, before it is judged.
#[derive(Debug)]
pub(crate) struct Ran {
    pub runs: Vec<TrialRun>,
    pub summary: Vec<TargetSummary>,
    pub deltas: Vec<PercentileDelta>,
    /// Per turn number, with sessions (empty otherwise).
    pub turn_deltas: Vec<PercentileDelta>,
    pub resources: Vec<ResourceReport>,
    pub interrupted: bool,
}

impl CompareResult {
    /// The result of `comparison`'s trials: invalid when any trial was, or when it was stopped
    /// before every trial ran.
    pub(crate) fn judged(
        envelope: crate::results::envelope::Envelope,
        plan: Plan,
        comparison: Comparison,
        mock: Option<String>,
        ran: Ran,
    ) -> CompareResult {
        let invalid = invalid_reasons(&ran.runs, "");
        CompareResult {
            envelope,
            header: comparison.header(&plan, mock, crate::model::target::NO_TWIN),
            runs: ran.runs,
            summary: ran.summary,
            deltas: ran.deltas,
            turn_deltas: ran.turn_deltas,
            footer: ComparisonFooter::new(ran.resources, invalid, ran.interrupted, "trial"),
        }
    }
}

/// Why each trial of `runs` that is invalid is, `prefix` before the target's name.
pub(crate) fn invalid_reasons(runs: &[TrialRun], prefix: &str) -> Vec<String> {
    runs.iter()
        .filter(|r| !r.run.validity.valid)
        .map(|r| {
            format!(
                "{prefix}{} trial {}: {}",
                r.name,
                r.trial,
                r.run.validity.reasons.join("; ")
            )
        })
        .collect()
}
