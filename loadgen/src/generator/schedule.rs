//! The schedule: when each request is due, as an offset from the start of the run.
//!
//! Slot `i` has a position `x_i` in expected arrivals: `i` (constant arrivals) or the sum of `i`
//! seeded exponential gaps of mean 1 (Poisson arrivals). The pace maps it to time: `x / rate`
//! at a steady rate, the instant by which a ramp is expected to have sent `x` (stages, a
//! Poisson process of varying rate by time rescaling), or a trace's `i`-th instant. Each worker
//! takes every `stride`-th slot from its `first` (worker `w` of `W`: first `w`, stride `W`; with
//! shards, see `shard`), so the union of the workers is exactly the one schedule.

use std::sync::Arc;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;

use crate::generator::rate_curve::{RateCurve, Stages};

use crate::model::load::Arrival;

/// The slots of one worker, in order. An iterator of `(index, due offset in ns)`.
#[derive(Debug, Clone)]
pub struct Schedule {
    arrival: Arrival,
    interval_ns: f64,
    shape: Shape,
    stride: u64,
    next: u64,
    // Poisson only: the whole schedule's generator and the due time of slot `cursor`.
    rng: Pcg64Mcg,
    gap: Option<Exp<f64>>,
    cursor: u64,
    cursor_ns: f64,
}

impl Schedule {
    /// Every `stride`-th slot from slot `first` of the schedule of `rate` requests per second
    /// (the whole schedule's rate).
    ///
    /// # Panics
    /// If `rate` is not positive and finite or `first >= stride`; the plan validates both.
    #[cfg(test)]
    pub fn new(arrival: Arrival, rate: f64, seed: u64, first: u64, stride: u64) -> Schedule {
        Schedule::paced(arrival, rate, seed, first, stride, &RateCurve::Steady)
    }

    /// [`Schedule::new`] at `pace`: a steady pace keeps `rate`; stages and traces bring their
    /// own (a trace its instants, whatever the arrival process).
    pub fn paced(
        arrival: Arrival,
        rate: f64,
        seed: u64,
        first: u64,
        stride: u64,
        pace: &RateCurve,
    ) -> Schedule {
        assert!(rate.is_finite() && rate > 0.0, "rate must be positive");
        assert!(first < stride, "first slot out of range");
        let shape = match pace {
            RateCurve::Steady => Shape::Steady,
            RateCurve::Stages(stages) => Shape::Stages(Arc::new(stages.clone())),
            RateCurve::Trace(replay) => Shape::Trace(replay.instants.clone()),
        };
        Schedule {
            arrival,
            shape,
            // At a pace other than steady, positions are in arrivals, not ns.
            interval_ns: if matches!(pace, RateCurve::Steady) {
                1e9 / rate
            } else {
                1.0
            },
            stride,
            next: first,
            rng: Pcg64Mcg::seed_from_u64(seed),
            // Invariant: a rate of 1 is valid for Exp; gaps are scaled by the interval.
            gap: (arrival == Arrival::Poisson).then(|| Exp::new(1.0).expect("rate 1 is valid")),
            cursor: 0,
            cursor_ns: 0.0,
        }
    }

    /// Due offset of the whole schedule's slot `i`, for Poisson arrivals: walks the shared
    /// generator forward (each worker walks it all, so every worker agrees on every slot).
    fn poisson_due(&mut self, i: u64) -> f64 {
        // Invariant: set for Poisson schedules, and this is only called for them.
        let gap = self.gap.expect("poisson schedule");
        while self.cursor < i {
            self.cursor_ns += gap.sample(&mut self.rng) * self.interval_ns;
            self.cursor += 1;
        }
        self.cursor_ns
    }
}

/// What a slot's position maps to.
#[derive(Debug, Clone)]
enum Shape {
    Steady,
    Stages(Arc<Stages>),
    Trace(Arc<[u64]>),
}

impl Iterator for Schedule {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        let i = self.next;
        self.next += self.stride;
        if let Shape::Trace(instants) = &self.shape {
            return usize::try_from(i)
                .ok()
                .and_then(|i| instants.get(i))
                .map(|ns| (i, *ns));
        }
        let x = match self.arrival {
            Arrival::Constant => i as f64 * self.interval_ns,
            Arrival::Poisson => self.poisson_due(i),
        };
        match &self.shape {
            Shape::Stages(stages) => stages.due_ns(x).map(|ns| (i, ns)),
            _ => Some((i, x.round() as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_slots_are_evenly_spaced() {
        let slots: Vec<_> = Schedule::new(Arrival::Constant, 5000.0, 0, 0, 1)
            .take(4)
            .collect();
        assert_eq!(
            slots,
            vec![(0, 0), (1, 200_000), (2, 400_000), (3, 600_000)]
        );
    }

    #[test]
    fn workers_split_one_schedule_exactly() {
        for arrival in [Arrival::Constant, Arrival::Poisson] {
            let whole: Vec<_> = Schedule::new(arrival, 1000.0, 9, 0, 1).take(300).collect();
            let mut merged: Vec<_> = (0..3)
                .flat_map(|w| Schedule::new(arrival, 1000.0, 9, w, 3).take(100))
                .collect();
            merged.sort_unstable();
            assert_eq!(merged, whole, "{arrival:?}");
        }
    }

    #[test]
    fn stages_and_traces_split_across_workers_and_end() {
        let stages = Stages::parse("1s:1000,1s:0", 0.0).unwrap();
        let replay =
            crate::generator::rate_curve::Replay::new("t".into(), 1.0, vec![0, 5, 5, 90, 1_000]);
        for pace in [RateCurve::Stages(stages), RateCurve::Trace(replay)] {
            for arrival in [Arrival::Constant, Arrival::Poisson] {
                let whole: Vec<_> = Schedule::paced(arrival, 1.0, 4, 0, 1, &pace).collect();
                let mut merged: Vec<_> = (0..3)
                    .flat_map(|w| Schedule::paced(arrival, 1.0, 4, w, 3, &pace))
                    .collect();
                merged.sort_unstable();
                assert_eq!(merged, whole, "{pace:?} {arrival:?}");
                assert!(whole.windows(2).all(|w| w[0].1 <= w[1].1));
                match &pace {
                    RateCurve::Trace(_) => {
                        assert_eq!(
                            whole.iter().map(|s| s.1).collect::<Vec<_>>(),
                            [0, 5, 5, 90, 1_000]
                        )
                    }
                    // About the 1,000 arrivals the ramp holds, none after its end.
                    _ => {
                        assert!((900..=1_100).contains(&whole.len()), "{}", whole.len());
                        assert!(whole.last().unwrap().1 < 2_000_000_000);
                    }
                }
            }
        }
    }

    #[test]
    fn poisson_has_the_right_mean_rate_and_is_seeded() {
        let n = 100_000;
        let last = Schedule::new(Arrival::Poisson, 2000.0, 1, 0, 1)
            .nth(n)
            .unwrap()
            .1;
        let rate = n as f64 / (last as f64 / 1e9);
        assert!((rate - 2000.0).abs() < 30.0, "{rate}");
        let a: Vec<_> = Schedule::new(Arrival::Poisson, 100.0, 5, 0, 1)
            .take(50)
            .collect();
        let b: Vec<_> = Schedule::new(Arrival::Poisson, 100.0, 5, 0, 1)
            .take(50)
            .collect();
        let c: Vec<_> = Schedule::new(Arrival::Poisson, 100.0, 6, 0, 1)
            .take(50)
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Gaps are not all equal (it is not the constant schedule).
        let gaps: std::collections::BTreeSet<u64> = a.windows(2).map(|w| w[1].1 - w[0].1).collect();
        assert!(gaps.len() > 40);
    }
}
