//! Ramping arrival rates (`--stages 30s:1000,60s:5000,30s:0`, as k6's ramping-arrival-rate):
//! each stage moves the rate linearly from where the last one left it to its own target over
//! its duration (a `0s` stage jumps). The schedule is the expected count of arrivals, inverted:
//! slot `x` is due at the instant `t` whose integral of the rate from 0 is `x`.

use std::time::Duration;

use gatebench_shared::duration::parse_us;
use serde::Serialize;

use crate::generator::plan_error::PlanError;
use crate::generator::quantity::parse_rate;

/// One stage: from the previous stage's rate (the first: `start_rate`) to `to_rate` over
/// `duration`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stage {
    #[serde(
        rename = "duration_us",
        serialize_with = "crate::generator::quantity::duration_us"
    )]
    pub duration: Duration,
    pub to_rate: f64,
}

/// Most stages one plan may name.
const MAX_STAGES: usize = 1_000;

/// A validated sequence of stages, with the arrivals each one holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stages {
    pub start_rate: f64,
    pub stages: Vec<Stage>,
    /// Per stage: (start s, end s, from rate, expected arrivals before its start).
    #[serde(skip)]
    spans: Vec<Span>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    start_s: f64,
    duration_s: f64,
    from: f64,
    to: f64,
    before: f64,
}

impl Span {
    fn arrivals(&self) -> f64 {
        (self.from + self.to) / 2.0 * self.duration_s
    }
}

impl Stages {
    /// Parses `DURATION:RATE[,DURATION:RATE…]`, starting from `start_rate` requests per second.
    pub fn parse(text: &str, start_rate: f64) -> Result<Stages, PlanError> {
        let err = || {
            PlanError::Named(
                "--stages",
                text.to_string(),
                "stages like 30s:1000,60s:5k,30s:0 (duration:target rate, each ramped linearly from the last; 0s jumps)",
            )
        };
        let mut stages = Vec::new();
        for part in text.split(',') {
            let (duration, rate) = part.trim().split_once(':').ok_or_else(err)?;
            let duration = parse_us(duration.trim())
                .map(Duration::from_micros)
                .ok_or_else(err)?;
            let to_rate = match rate.trim() {
                "0" => 0.0,
                rate => parse_rate(rate).map_err(|_| err())?,
            };
            stages.push(Stage { duration, to_rate });
        }
        if stages.len() > MAX_STAGES {
            return Err(err());
        }
        let stages = Stages::new(start_rate, stages);
        if stages.total_arrivals() < 1.0 || stages.duration().is_zero() {
            return Err(PlanError::Named(
                "--stages",
                text.to_string(),
                "stages that send at least one request over a duration above zero",
            ));
        }
        Ok(stages)
    }

    fn new(start_rate: f64, stages: Vec<Stage>) -> Stages {
        let mut spans = Vec::with_capacity(stages.len());
        let (mut from, mut start_s, mut before) = (start_rate, 0.0, 0.0);
        for stage in &stages {
            let span = Span {
                start_s,
                duration_s: stage.duration.as_secs_f64(),
                from,
                to: stage.to_rate,
                before,
            };
            before += span.arrivals();
            start_s += span.duration_s;
            from = stage.to_rate;
            spans.push(span);
        }
        Stages {
            start_rate,
            stages,
            spans,
        }
    }

    /// The whole ramp's length.
    pub fn duration(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// Requests the whole ramp is expected to send.
    pub fn total_arrivals(&self) -> f64 {
        self.spans.last().map_or(0.0, |s| s.before + s.arrivals())
    }

    /// The mean rate over the ramp.
    pub fn mean_rate(&self) -> f64 {
        self.total_arrivals() / self.duration().as_secs_f64().max(1e-9)
    }

    /// The instant (ns from the start) by which `x` arrivals are expected; `None` past the
    /// last stage.
    pub fn due_ns(&self, x: f64) -> Option<u64> {
        // The first span whose arrivals reach past x (zero-arrival spans are passed over).
        let at = self.spans.partition_point(|s| s.before + s.arrivals() <= x);
        let span = self.spans.get(at)?;
        let c = x - span.before;
        // Solve from·t + (to − from)/(2D)·t² = c for t in [0, D], in the form that holds for
        // from = 0 and for from = to alike.
        let slope = (span.to - span.from) / span.duration_s;
        let root = (span.from * span.from + 2.0 * slope * c).max(0.0).sqrt();
        let t = if c <= 0.0 {
            0.0
        } else {
            2.0 * c / (span.from + root)
        };
        Some(((span.start_s + t.min(span.duration_s)) * 1e9).round() as u64)
    }

    /// The stage whose span holds the instant `ns` (the last stage past the end).
    pub fn stage_of(&self, ns: u64) -> usize {
        let s = ns as f64 / 1e9;
        self.spans
            .partition_point(|span| span.start_s + span.duration_s <= s)
            .min(self.spans.len().saturating_sub(1))
    }

    /// Each stage's (start s, end s, from rate, to rate, expected arrivals).
    pub fn outline(&self) -> impl Iterator<Item = (f64, f64, f64, f64, f64)> + '_ {
        self.spans.iter().map(|s| {
            (
                s.start_s,
                s.start_s + s.duration_s,
                s.from,
                s.to,
                s.arrivals(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_sends_the_area_under_its_rate() {
        let stages = Stages::parse("10s:1000,20s:1000,10s:0", 0.0).unwrap();
        // 5,000 up, 20,000 flat, 5,000 down.
        assert_eq!(stages.total_arrivals(), 30_000.0);
        assert_eq!(stages.duration(), Duration::from_secs(40));
        assert_eq!(stages.mean_rate(), 750.0);
        // Up the ramp, x arrivals by t = sqrt(2x·D/1000): 5,000 at 10 s, 1,250 at 5 s.
        assert_eq!(stages.due_ns(1_250.0), Some(5_000_000_000));
        assert_eq!(stages.due_ns(5_000.0), Some(10_000_000_000));
        // Flat: one every ms.
        assert_eq!(stages.due_ns(6_000.0), Some(11_000_000_000));
        // Down: the last 1,250 over the last 5 s (t where 5,000 − x_left = …).
        assert_eq!(stages.due_ns(25_000.0 + 3_750.0), Some(35_000_000_000));
        assert_eq!(stages.due_ns(30_000.0), None);
        assert_eq!(stages.stage_of(0), 0);
        assert_eq!(stages.stage_of(10_000_000_000), 1);
        assert_eq!(stages.stage_of(39_000_000_000), 2);
        assert_eq!(stages.stage_of(99_000_000_000), 2);
    }

    #[test]
    fn a_zero_stage_jumps_and_a_pause_sends_nothing() {
        let stages = Stages::parse("0s:2k,1s:2k,1s:0,1s:0,0s:1k,1s:1k", 0.0).unwrap();
        assert_eq!(stages.total_arrivals(), 2_000.0 + 1_000.0 + 1_000.0);
        // Right after the jump: 2,000 a second from the start.
        assert_eq!(stages.due_ns(2.0), Some(1_000_000));
        // The pause (2 s to 3 s) holds no slot: the next after the ramp down is at 3 s.
        assert_eq!(stages.due_ns(3_000.0), Some(3_000_000_000));
        assert_eq!(stages.due_ns(3_001.0), Some(3_001_000_000));
    }

    #[test]
    fn bad_stages_say_what_was_expected() {
        for bad in ["", "30s", "30s:", "x:100", "10s:-5", "10s:0", "0s:100"] {
            let err = Stages::parse(bad, 0.0).unwrap_err().to_string();
            assert!(err.contains("--stages"), "{bad}: {err}");
        }
        // A start rate makes a stage down to 0 send something.
        assert!(Stages::parse("10s:0", 100.0).is_ok());
    }
}
