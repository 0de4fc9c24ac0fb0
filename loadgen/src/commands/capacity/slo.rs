//! Service-level objectives a run is judged against: `p99<50ms,ttft_p99<500ms,errors<1%`.
//! A percentile of any recorded time (response time when no metric is named), or the share of
//! failed requests.

use crate::generator::plan_error::PlanError;
use crate::results::capacity::Objective;
use crate::results::capacity::{Judged, Slo};
use crate::results::metric::Metric;
use crate::results::run::TargetRun;

impl Slo {
    /// Parses a comma-separated list of `[METRIC_]pNN<DURATION` and `errors<N%` (or a
    /// fraction).
    pub fn parse(text: &str) -> Result<Slo, PlanError> {
        let err = || {
            PlanError::Named(
                "--slo",
                text.to_string(),
                "objectives like p99<50ms,ttft_p99<500ms,errors<1% (a percentile of response_time, ttft, ttfb, itl, tpot or service_time under a duration; failed requests under a share)",
            )
        };
        let mut objectives = Vec::new();
        for part in text.split(',') {
            let (name, limit) = part.trim().split_once('<').ok_or_else(err)?;
            let (name, limit) = (name.trim(), limit.trim());
            if name == "errors" {
                let limit = match limit.strip_suffix('%') {
                    Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
                    None => limit.parse::<f64>(),
                }
                .ok()
                .filter(|l| (0.0..=1.0).contains(l))
                .ok_or_else(err)?;
                objectives.push(Objective::Errors { limit });
                continue;
            }
            let (metric, pct) = match name.rsplit_once('_') {
                Some((metric, pct)) if pct.starts_with('p') => (metric, pct),
                _ => ("response_time", name),
            };
            let metric = Metric::ALL
                .iter()
                .find(|m| m.name() == metric && m.is_time())
                .ok_or_else(err)?
                .name();
            let quantile = pct
                .strip_prefix('p')
                .and_then(|p| p.parse::<f64>().ok())
                .filter(|p| *p > 0.0 && *p < 100.0)
                .map(|p| (p * 1e4).round() / 1e6)
                .ok_or_else(err)?;
            let limit_us = gatebench_shared::duration::parse_us(limit)
                .filter(|us| *us > 0)
                .ok_or_else(err)?;
            objectives.push(Objective::Percentile {
                metric,
                quantile,
                limit_us,
            });
        }
        Ok(Slo {
            text: text.to_string(),
            objectives,
        })
    }

    /// Each objective against `run`. A percentile of a metric the run did not record (TTFT of
    /// a whole answer) is not met: the objective names what the load must show.
    pub fn judge(&self, run: &TargetRun) -> Vec<Judged> {
        self.objectives
            .iter()
            .map(|o| match o {
                Objective::Errors { limit } => {
                    let value = if run.requests == 0 {
                        1.0
                    } else {
                        run.failed as f64 / run.requests as f64
                    };
                    Judged {
                        objective: format!("errors<{}%", limit * 100.0),
                        value,
                        limit: *limit,
                        met: run.requests > 0 && value < *limit,
                    }
                }
                Objective::Percentile {
                    metric,
                    quantile,
                    limit_us,
                } => {
                    let value = run
                        .histograms
                        .iter()
                        .find(|(m, h)| m.name() == *metric && !h.is_empty())
                        .map(|(_, h)| h.value_at_quantile(*quantile) as f64);
                    Judged {
                        objective: format!("{metric} p{}<{}us", quantile * 100.0, limit_us),
                        value: value.unwrap_or(f64::INFINITY),
                        limit: *limit_us as f64,
                        met: value.is_some_and(|v| v < *limit_us as f64),
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_with_their_metric_and_limit() {
        let slo = Slo::parse("p99<50ms, ttft_p99.9<500ms,errors<1%").unwrap();
        assert_eq!(
            slo.objectives,
            [
                Objective::Percentile {
                    metric: "response_time",
                    quantile: 0.99,
                    limit_us: 50_000
                },
                Objective::Percentile {
                    metric: "ttft",
                    quantile: 0.999,
                    limit_us: 500_000
                },
                Objective::Errors { limit: 0.01 },
            ]
        );
        assert_eq!(
            Slo::parse("errors<0.05").unwrap().objectives,
            [Objective::Errors { limit: 0.05 }]
        );
        for bad in [
            "",
            "p99",
            "p99>5ms",
            "p100<1ms",
            "colour_p99<1ms",
            "output_tokens_p50<1ms",
            "errors<200%",
            "p99<soon",
        ] {
            assert!(Slo::parse(bad).is_err(), "{bad}");
        }
    }
}
