//! The statistics behind every "gateway adds X" figure: medians, seeded bootstrap intervals for
//! paired differences, and Student's t intervals across a handful of trials.
//!
//! Every function is deterministic: the same sample and seed give the same interval, so a result
//! can be recomputed from its JSON.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// An estimate with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Confidence level, e.g. 0.95.
    pub confidence: f64,
}

impl Interval {
    /// True when the interval contains zero: the difference cannot be told from none.
    pub fn contains_zero(&self) -> bool {
        self.low <= 0.0 && self.high >= 0.0
    }

    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }

    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_of_sorted(&sorted)
}

fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The `q`-quantile (0..=1) of sorted values, linearly interpolated between order statistics
/// (the "type 7" definition of R and NumPy's default).
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let fraction = position - below as f64;
    Some(sorted[below] + (sorted[above] - sorted[below]) * fraction)
}

/// The median of `values` with a percentile-bootstrap interval: `resamples` resamples drawn
/// with replacement by a generator seeded with `seed`, the interval being the
/// `(1 − confidence) / 2` and `(1 + confidence) / 2` quantiles of their medians.
pub fn bootstrap_median(
    values: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<Interval> {
    let estimate = median(values)?;
    let n = values.len();
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut resample = vec![0.0; n];
    let mut medians = Vec::with_capacity(resamples.max(1));
    for _ in 0..resamples.max(1) {
        for slot in resample.iter_mut() {
            *slot = values[rng.random_range(0..n)];
        }
        resample.sort_unstable_by(f64::total_cmp);
        // Invariant: the resample has n ≥ 1 values.
        medians.push(median_of_sorted(&resample).unwrap_or(estimate));
    }
    medians.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Some(Interval {
        estimate,
        low: quantile_of_sorted(&medians, tail).unwrap_or(estimate),
        high: quantile_of_sorted(&medians, 1.0 - tail).unwrap_or(estimate),
        confidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    #[test]
    fn medians_and_quantiles_match_the_textbook() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        // NumPy: np.quantile([1,2,3,4,5], [0, .1, .5, .9, 1]) == [1, 1.4, 3, 4.6, 5]
        let q = |p| quantile_of_sorted(&sorted, p).unwrap();
        assert_eq!(q(0.0), 1.0);
        assert!((q(0.1) - 1.4).abs() < 1e-12);
        assert_eq!(q(0.5), 3.0);
        assert!((q(0.9) - 4.6).abs() < 1e-12);
        assert_eq!(q(1.0), 5.0);
    }

    #[test]
    fn bootstrap_is_deterministic_and_degenerate_samples_have_no_width() {
        let sample: Vec<f64> = (0..150).map(|i| ((i * 37) % 101) as f64 / 10.0).collect();
        let a = bootstrap_median(&sample, 10_000, 0.95, 7).unwrap();
        let b = bootstrap_median(&sample, 10_000, 0.95, 7).unwrap();
        assert_eq!(a, b);
        assert!(a.low <= a.estimate && a.estimate <= a.high);
        let c = bootstrap_median(&[2.5; 40], 1_000, 0.95, 1).unwrap();
        assert_eq!((c.estimate, c.low, c.high), (2.5, 2.5, 2.5));
        assert!(!c.contains_zero());
        assert!(bootstrap_median(&[], 100, 0.95, 1).is_none());
    }

    #[test]
    fn bootstrap_interval_of_the_median_has_its_stated_coverage() {
        // 200 samples of 150 from N(2, 1): the 95% interval should cover the true median 2.0 in
        // about 95% of them (the percentile bootstrap of a median is a little conservative).
        let normal = Normal::new(2.0, 1.0).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(42);
        let mut covered = 0;
        let mut widths = Vec::new();
        for trial in 0..200 {
            let sample: Vec<f64> = (0..150).map(|_| normal.sample(&mut rng)).collect();
            let interval = bootstrap_median(&sample, 2_000, 0.95, trial).unwrap();
            covered += usize::from(interval.contains(2.0));
            widths.push(interval.width());
        }
        assert!((180..=200).contains(&covered), "covered {covered} of 200");
        // The standard error of a median of 150 normal values is 1.2533 / sqrt(150) = 0.102, so
        // the interval is about 4 of them wide.
        let width = median(&widths).unwrap();
        assert!((0.3..0.55).contains(&width), "median width {width}");
    }
}
