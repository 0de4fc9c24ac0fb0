//! The thresholds a merged run is judged by: `run`'s `--max-p99` and `--max-error-rate` (the
//! merge's flags, else the shards' own, which every shard shares) and `capacity`'s `--slo`,
//! judged on the whole run, so a run sharded over a cluster can gate CI as one process's would.

use crate::generator::plan::positive_duration;
use crate::generator::plan_error::PlanError;
use crate::options::MergeArgs;
use crate::results::capacity::{Judged, Slo};
use crate::results::run::RunResult;

/// What the merged run must meet.
#[derive(Debug, Clone, Default)]
pub struct Thresholds {
    max_p99_us: Option<u64>,
    max_error_rate: Option<f64>,
    slo: Option<Slo>,
}

impl Thresholds {
    /// The merge's threshold flags, checked as `run` and `capacity` check theirs.
    pub fn from_args(args: &MergeArgs) -> Result<Thresholds, PlanError> {
        let max_p99_us = args
            .max_p99
            .as_deref()
            .map(|t| positive_duration("--max-p99", t, "").map(|d| d.as_micros() as u64))
            .transpose()?;
        if let Some(rate) = args.max_error_rate {
            if !(0.0..=1.0).contains(&rate) {
                return Err(PlanError::ErrorRate(rate));
            }
        }
        Ok(Thresholds {
            max_p99_us,
            max_error_rate: args.max_error_rate,
            slo: args.slo.as_deref().map(Slo::parse).transpose()?,
        })
    }

    /// Every threshold against the merged run, a flag winning over the plan's own. The p99 and
    /// the error rate pass when equal to their limit, as in `run`; an objective of the SLO
    /// only when under it, as in `capacity`.
    pub fn judge(&self, merged: &RunResult) -> Vec<Judged> {
        let Some(run) = merged.runs.first() else {
            return Vec::new();
        };
        let mut judged = Vec::new();
        if let Some(limit) = self.max_error_rate.or(merged.plan.max_error_rate) {
            let value = 1.0 - run.success_rate;
            judged.push(Judged {
                objective: format!("error rate <= {limit} (--max-error-rate)"),
                value,
                limit,
                met: run.requests > 0 && value <= limit,
            });
        }
        if let Some(limit_us) = self.max_p99_us.or(merged.plan.max_p99_us) {
            let p99 = run.metrics.get("response_time").map(|s| s.p99 as f64);
            judged.push(Judged {
                objective: format!("response_time p99 <= {limit_us}us (--max-p99)"),
                value: p99.unwrap_or(f64::INFINITY),
                limit: limit_us as f64,
                met: p99.is_some_and(|v| v <= limit_us as f64),
            });
        }
        if let Some(slo) = &self.slo {
            judged.extend(slo.judge(run));
        }
        judged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(max_p99: Option<&str>, max_error_rate: Option<f64>, slo: Option<&str>) -> MergeArgs {
        MergeArgs {
            inputs: Vec::new(),
            out: None,
            partial: false,
            absent: Vec::new(),
            max_p99: max_p99.map(str::to_string),
            max_error_rate,
            slo: slo.map(str::to_string),
        }
    }

    #[test]
    fn bad_thresholds_are_refused_by_their_flag() {
        let said = |a: MergeArgs| Thresholds::from_args(&a).unwrap_err().to_string();
        assert!(said(args(Some("soon"), None, None)).contains("--max-p99"));
        assert!(said(args(Some("0ms"), None, None)).contains("--max-p99"));
        assert!(said(args(None, Some(1.5), None)).contains("1.5"));
        assert!(said(args(None, None, Some("p99>5ms"))).contains("--slo"));
        let t = Thresholds::from_args(&args(Some("50ms"), Some(0.01), Some("errors<1%"))).unwrap();
        assert_eq!(t.max_p99_us, Some(50_000));
        assert_eq!(t.max_error_rate, Some(0.01));
        assert_eq!(t.slo.unwrap().objectives.len(), 1);
    }
}
