//! The search for the highest rate that meets an SLO: bracket by factors of 4 from a start
//! rate, then narrow. An overloaded run's goodput is about the target's capacity, so the first
//! narrowing run is just under it and the next just over the highest pass; geometric
//! bisection after that. It stops when the highest pass and the lowest failure are within the
//! precision of each other, or after the most runs allowed.

use serde::Serialize;

/// Where the search stands after its runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bracket {
    /// The highest rate that met the SLO.
    pub passed: Option<f64>,
    /// The lowest rate that did not.
    pub failed: Option<f64>,
    pub runs: usize,
    /// `failed / passed − 1` is within the precision.
    pub resolved: bool,
    /// The highest rate allowed met the SLO: the capacity is at least that.
    pub at_ceiling: bool,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    Run(f64),
    Done(Bracket),
}

/// Lowest rate searched, requests per second.
const FLOOR: f64 = 1.0;
/// The bracketing factor.
const STEP: f64 = 4.0;

/// The search's state.
#[derive(Debug, Clone)]
pub struct Search {
    start: f64,
    ceiling: f64,
    precision: f64,
    max_runs: usize,
    passed: Option<f64>,
    failed: Option<f64>,
    runs: usize,
    /// Goodput of the lowest failing run, and whether a run was aimed by it.
    hint: Option<f64>,
    hinted: bool,
    /// The last run was aimed by the hint (so the next probes the other side of it).
    after_hint: bool,
}

impl Search {
    pub fn new(start: f64, ceiling: f64, precision: f64, max_runs: usize) -> Search {
        Search {
            start: start.min(ceiling),
            ceiling,
            precision,
            max_runs,
            passed: None,
            failed: None,
            runs: 0,
            hint: None,
            hinted: false,
            after_hint: false,
        }
    }

    /// Where the search stands now.
    pub fn bracket_now(&self) -> Bracket {
        self.bracket()
    }

    fn bracket(&self) -> Bracket {
        Bracket {
            passed: self.passed,
            failed: self.failed,
            runs: self.runs,
            resolved: match (self.passed, self.failed) {
                (Some(lo), Some(hi)) => hi / lo - 1.0 <= self.precision + 1e-9,
                _ => false,
            },
            at_ceiling: self.passed.is_some_and(|lo| lo >= self.ceiling),
        }
    }

    /// The next rate to run, or the answer.
    pub fn next_step(&mut self) -> Next {
        let done = Next::Done(self.bracket());
        if self.runs >= self.max_runs {
            return done;
        }
        let p = self.precision;
        let rate = match (self.passed, self.failed) {
            (None, None) => self.start,
            (Some(lo), None) if lo >= self.ceiling => return done,
            (Some(lo), None) => (lo * STEP).min(self.ceiling),
            (None, Some(hi)) if hi <= FLOOR => return done,
            (None, Some(hi)) => (hi / STEP).max(FLOOR),
            (Some(lo), Some(hi)) => {
                if self.bracket().resolved {
                    return done;
                }
                let inside = |x: f64| x > lo * (1.0 + 1e-9) && x < hi * (1.0 - 1e-9);
                let aimed = self.hint.map(|g| g * (1.0 - p / 2.0));
                if let Some(x) = aimed.filter(|x| !self.hinted && inside(*x)) {
                    self.hinted = true;
                    self.after_hint = true;
                    return Next::Run(x);
                }
                // Just inside the precision from the side the last run moved.
                let edge = if std::mem::take(&mut self.after_hint) {
                    [lo * (1.0 + p * 0.98), hi / (1.0 + p * 0.98)]
                        .into_iter()
                        .find(|x| inside(*x))
                } else {
                    None
                };
                edge.unwrap_or_else(|| (lo * hi).sqrt())
            }
        };
        Next::Run(rate)
    }

    /// Records that a run at `rate` met the SLO or did not, with its goodput (successful
    /// responses per second).
    pub fn record(&mut self, rate: f64, met: bool, goodput: f64) {
        self.runs += 1;
        if met {
            self.passed = Some(self.passed.map_or(rate, |lo| lo.max(rate)));
        } else {
            let lowest = self.failed.is_none_or(|hi| rate < hi);
            if lowest {
                self.failed = Some(rate);
                if goodput > 0.0 {
                    self.hint = Some(goodput);
                }
            }
        }
        if let (Some(lo), Some(hi)) = (self.passed, self.failed) {
            // A pass at or above a failure: the machine's noise crossed the SLO. The newest
            // run stands and the search brackets again from it.
            if lo >= hi {
                if met {
                    self.failed = None;
                    self.hint = None;
                } else {
                    self.passed = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Searches a target of capacity `cap` whose runs fail just past it, with goodput `cap`
    /// when overloaded.
    fn find(cap: f64, start: f64, ceiling: f64) -> Bracket {
        let mut s = Search::new(start, ceiling, 0.05, 8);
        loop {
            match s.next_step() {
                Next::Run(rate) => s.record(rate, rate <= cap * 1.004, rate.min(cap)),
                Next::Done(b) => return b,
            }
        }
    }

    #[test]
    fn a_known_capacity_is_found_within_the_precision_in_eight_runs() {
        for cap in [2_000.0, 333.0, 7_500.0, 40.0, 51_234.0] {
            let b = find(cap, 100.0, 1e6);
            let (lo, hi) = (b.passed.unwrap(), b.failed.unwrap());
            assert!(b.resolved, "{cap}: {b:?}");
            assert!(lo <= cap * 1.004 && hi > cap, "{cap}: {b:?}");
            assert!(lo >= cap * 0.95, "{cap}: {b:?}");
            assert!(b.runs <= 8, "{cap}: {b:?}");
        }
    }

    #[test]
    fn a_target_past_the_ceiling_or_under_the_floor_says_so() {
        let b = find(1e9, 100.0, 10_000.0);
        assert!(b.at_ceiling && b.failed.is_none(), "{b:?}");
        let b = find(0.5, 100.0, 1e6);
        assert!(b.passed.is_none() && b.failed == Some(FLOOR), "{b:?}");
    }

    #[test]
    fn without_a_goodput_hint_it_bisects() {
        let mut s = Search::new(1_000.0, 1e6, 0.05, 20);
        let mut runs = 0;
        let b = loop {
            match s.next_step() {
                Next::Run(rate) => {
                    runs += 1;
                    s.record(rate, rate <= 3_000.0, 0.0)
                }
                Next::Done(b) => break b,
            }
        };
        assert!(b.resolved && runs <= 8, "{b:?} in {runs}");
    }
}
