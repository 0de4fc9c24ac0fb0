//! Figures combined across trials, and the tests that compare them.
//!
//! A trial's interval carries only the noise between the rounds of that trial. Two processes of
//! one binary, or one process on two sets of connections, also differ by a few µs from trial to
//! trial (placement, caches, wake-up paths), and a verdict must hold against that too. So a
//! figure across trials is the mean of the trials' estimates, with a Student's t interval over
//! them (k − 1 degrees of freedom): with three trials it is wide unless the trials agree, which
//! is the point. One trial gives no measure of that variation; its own interval is used and the
//! result says so.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::stats::Interval;

/// One figure across trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AcrossTrials {
    /// Trials combined.
    pub trials: usize,
    /// Mean of the trials' estimates.
    pub mean: f64,
    /// Standard error of the mean: between trials, or from the one trial's interval.
    pub standard_error: f64,
    /// Degrees of freedom of the t distribution the mean follows.
    pub degrees_of_freedom: f64,
}

/// Degrees of freedom standing for "normal" (one trial, judged by its own bootstrap interval).
const NORMAL_DF: f64 = 1e6;

impl AcrossTrials {
    /// Combines per-trial estimates, each with its own interval. `None` without any.
    pub fn of(per_trial: &[Interval]) -> Option<AcrossTrials> {
        let k = per_trial.len();
        match k {
            0 => None,
            1 => {
                let one = per_trial[0];
                let z = normal_quantile(0.5 + one.confidence / 2.0);
                Some(AcrossTrials {
                    trials: 1,
                    mean: one.estimate,
                    standard_error: (one.high - one.low) / (2.0 * z),
                    degrees_of_freedom: NORMAL_DF,
                })
            }
            _ => {
                let estimates: Vec<f64> = per_trial.iter().map(|i| i.estimate).collect();
                AcrossTrials::of_estimates(&estimates)
            }
        }
    }

    /// Combines per-trial estimates by the spread between them alone. `None` with fewer than
    /// two.
    pub fn of_estimates(estimates: &[f64]) -> Option<AcrossTrials> {
        let k = estimates.len();
        if k < 2 {
            return None;
        }
        let mean = estimates.iter().sum::<f64>() / k as f64;
        let variance = estimates.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
        Some(AcrossTrials {
            trials: k,
            mean,
            standard_error: (variance / k as f64).sqrt(),
            degrees_of_freedom: (k - 1) as f64,
        })
    }

    /// The two-sided interval of the mean at `confidence`.
    pub fn interval(&self, confidence: f64) -> Interval {
        let half =
            t_quantile(0.5 + confidence / 2.0, self.degrees_of_freedom) * self.standard_error;
        Interval {
            estimate: self.mean,
            low: self.mean - half,
            high: self.mean + half,
            confidence,
        }
    }

    /// `self` − `other` for independent figures: the difference of the means, its standard
    /// error, and Welch–Satterthwaite's degrees of freedom.
    pub fn minus(&self, other: &AcrossTrials) -> AcrossTrials {
        let (v1, v2) = (self.standard_error.powi(2), other.standard_error.powi(2));
        let degrees_of_freedom = if v1 + v2 == 0.0 {
            NORMAL_DF
        } else {
            (v1 + v2).powi(2)
                / (v1.powi(2) / self.degrees_of_freedom + v2.powi(2) / other.degrees_of_freedom)
        };
        AcrossTrials {
            trials: self.trials.min(other.trials),
            mean: self.mean - other.mean,
            standard_error: (v1 + v2).sqrt(),
            degrees_of_freedom,
        }
    }

    /// Two-sided p-value of "`self` and `other` have the same mean" (Welch's t test).
    pub fn p_value_against(&self, other: &AcrossTrials) -> f64 {
        self.minus(other).p_value_beyond(0.0)
    }

    /// Two-sided p-value of "the mean lies within ±`margin`" (0 for "the mean is zero").
    pub fn p_value_beyond(&self, margin: f64) -> f64 {
        let excess = (self.mean.abs() - margin.max(0.0)).max(0.0);
        if excess == 0.0 {
            return 1.0;
        }
        two_sided_p(excess, self.standard_error, self.degrees_of_freedom)
    }
}

fn two_sided_p(difference: f64, standard_error: f64, df: f64) -> f64 {
    if standard_error <= 0.0 || !standard_error.is_finite() {
        return if difference == 0.0 { 1.0 } else { 0.0 };
    }
    let t = (difference / standard_error).abs();
    match StudentsT::new(0.0, 1.0, df.max(f64::MIN_POSITIVE)) {
        Ok(dist) => (2.0 * (1.0 - dist.cdf(t))).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(f64::MIN_POSITIVE)).map_or(f64::INFINITY, |d| d.inverse_cdf(p))
}

fn normal_quantile(p: f64) -> f64 {
    t_quantile(p, NORMAL_DF)
}

/// Holm's step-down adjustment of `p_values`: each adjusted value is compared with the
/// family's error rate as it stands (a verdict at 5% then holds for the whole family).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_over_estimates_matches_a_hand_computation() {
        // mean 3, sample sd sqrt(2.5) = 1.5811, se 0.7071, t(0.975, 4) = 2.776 → ±1.9630.
        let i = AcrossTrials::of_estimates(&[1.0, 2.0, 3.0, 4.0, 5.0])
            .unwrap()
            .interval(0.95);
        assert!((i.estimate - 3.0).abs() < 1e-12);
        assert!((i.low - (3.0 - 1.962_9)).abs() < 1e-3, "{i:?}");
        assert!((i.high - (3.0 + 1.962_9)).abs() < 1e-3, "{i:?}");
        assert!(AcrossTrials::of_estimates(&[1.0]).is_none());
        // Far out the quantile tends to the normal one.
        assert!((t_quantile(0.975, 1_000.0) - 1.962).abs() < 0.001);
    }

    fn trial(estimate: f64) -> Interval {
        Interval {
            estimate,
            low: estimate - 1.0,
            high: estimate + 1.0,
            confidence: 0.95,
        }
    }

    #[test]
    fn the_interval_over_trials_is_a_t_interval() {
        let a = AcrossTrials::of(&[trial(10.0), trial(12.0), trial(14.0)]).unwrap();
        assert_eq!(a.mean, 12.0);
        assert!((a.standard_error - (4.0f64 / 3.0).sqrt()).abs() < 1e-9);
        let i = a.interval(0.95);
        // t(0.975, 2) = 4.303
        assert!(
            (i.high - 12.0 - 4.303 * a.standard_error).abs() < 0.01,
            "{i:?}"
        );
    }

    #[test]
    fn one_trial_keeps_its_own_interval() {
        let a = AcrossTrials::of(&[trial(5.0)]).unwrap();
        let i = a.interval(0.95);
        assert!(
            (i.low - 4.0).abs() < 0.01 && (i.high - 6.0).abs() < 0.01,
            "{i:?}"
        );
    }

    #[test]
    fn p_values_follow_the_t_distribution() {
        let a = AcrossTrials {
            trials: 3,
            mean: 4.303,
            standard_error: 1.0,
            degrees_of_freedom: 2.0,
        };
        assert!((a.p_value_beyond(0.0) - 0.05).abs() < 0.001);
        assert_eq!(a.p_value_beyond(5.0), 1.0);
        // Welch: t = 4.303 / √2 = 3.04 on (1 + 1)² / (1/2 + 1/2) = 4 degrees of freedom.
        let other = AcrossTrials { mean: 0.0, ..a };
        let p = a.p_value_against(&other);
        assert!((p - 0.0383).abs() < 0.001, "{p}");
    }

    #[test]
    fn holm_steps_down() {
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.5]);
        for (got, want) in adjusted.iter().zip([0.04, 0.09, 0.09, 0.5]) {
            assert!((got - want).abs() < 1e-12, "{adjusted:?}");
        }
    }
}
