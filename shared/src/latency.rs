//! Latency models: what the mock waits before it answers, and how long a stream is.
//!
//! Every draw is a pure function of `(seed, request ordinal)` (the seed's latency
//! [`Stream`](crate::seeded::Stream)), so two runs with the same seed see the same per-request
//! trace, and a request sent direct and the same request sent through a gateway (which forwards
//! `x-gatebench-seq`) wait exactly as long. Durations are read and written by
//! [`crate::duration`].

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand_distr::{Distribution as _, LogNormal, Normal};
use rand_pcg::Pcg64Mcg;

use crate::duration::{format_us, parse_us};
use crate::seeded::{self, Stream};

/// A user wrote a latency or token specification the mock cannot read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    #[error(
        "invalid latency '{0}': expected a duration like 20ms, uniform:10ms..30ms, \
         normal:20ms,5ms or lognormal:50ms,0.5 (median, sigma)"
    )]
    Latency(String),
    #[error(
        "invalid token count '{0}': expected a whole number from 1 to 1000000 like 16, \
         or a range like uniform:10..100"
    )]
    Tokens(String),
}

/// A distribution of durations, in microseconds. Draws below zero are clamped to zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Always the same value.
    Fixed { us: u64 },
    /// Uniform in `[lo_us, hi_us]`.
    Uniform { lo_us: u64, hi_us: u64 },
    /// Normal with the given mean and standard deviation.
    Normal { mean_us: u64, sd_us: u64 },
    /// Log-normal with the given median and shape (sigma of the underlying normal).
    LogNormal { median_us: u64, sigma: f64 },
}

impl Distribution {
    /// No latency at all.
    pub const ZERO: Distribution = Distribution::Fixed { us: 0 };

    /// True when every draw is zero, so callers can skip timers entirely.
    pub fn is_zero(&self) -> bool {
        matches!(self, Distribution::Fixed { us: 0 })
    }

    /// Draws one value in microseconds.
    pub fn sample_us<R: Rng>(&self, rng: &mut R) -> u64 {
        match *self {
            Distribution::Fixed { us } => us,
            Distribution::Uniform { lo_us, hi_us } => rng.random_range(lo_us..=hi_us),
            Distribution::Normal { mean_us, sd_us } => {
                // Invariant: sd_us is finite and non-negative (a u64), which Normal accepts.
                let normal = Normal::new(mean_us as f64, sd_us as f64).expect("valid normal");
                clamp_us(normal.sample(rng))
            }
            Distribution::LogNormal { median_us, sigma } => {
                // Invariant: the parser rejects a negative or non-finite sigma.
                let lognormal =
                    LogNormal::new((median_us.max(1) as f64).ln(), sigma).expect("valid lognormal");
                clamp_us(lognormal.sample(rng))
            }
        }
    }

    /// The mean of the distribution, in microseconds.
    pub fn mean_us(&self) -> f64 {
        match *self {
            Distribution::Fixed { us } => us as f64,
            Distribution::Uniform { lo_us, hi_us } => (lo_us + hi_us) as f64 / 2.0,
            Distribution::Normal { mean_us, .. } => mean_us as f64,
            Distribution::LogNormal { median_us, sigma } => {
                median_us as f64 * (sigma * sigma / 2.0).exp()
            }
        }
    }
}

fn clamp_us(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value.round() as u64
    } else {
        0
    }
}

impl FromStr for Distribution {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || SpecError::Latency(s.to_string());
        let s = s.trim();
        let Some((kind, args)) = s.split_once(':') else {
            return Ok(Distribution::Fixed {
                us: parse_us(s).ok_or_else(err)?,
            });
        };
        match kind {
            "fixed" => Ok(Distribution::Fixed {
                us: parse_us(args).ok_or_else(err)?,
            }),
            "uniform" => {
                let (lo, hi) = args.split_once("..").ok_or_else(err)?;
                let lo_us = parse_us(lo).ok_or_else(err)?;
                let hi_us = parse_us(hi).ok_or_else(err)?;
                if lo_us > hi_us {
                    return Err(err());
                }
                Ok(Distribution::Uniform { lo_us, hi_us })
            }
            "normal" => {
                let (mean, sd) = args.split_once(',').ok_or_else(err)?;
                Ok(Distribution::Normal {
                    mean_us: parse_us(mean).ok_or_else(err)?,
                    sd_us: parse_us(sd).ok_or_else(err)?,
                })
            }
            "lognormal" => {
                let (median, sigma) = args.split_once(',').ok_or_else(err)?;
                let sigma: f64 = sigma.trim().parse().map_err(|_| err())?;
                if !sigma.is_finite() || sigma < 0.0 {
                    return Err(err());
                }
                Ok(Distribution::LogNormal {
                    median_us: parse_us(median).ok_or_else(err)?,
                    sigma,
                })
            }
            _ => Err(err()),
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Distribution::Fixed { us } => write!(f, "{}", format_us(us)),
            Distribution::Uniform { lo_us, hi_us } => {
                write!(f, "uniform:{}..{}", format_us(lo_us), format_us(hi_us))
            }
            Distribution::Normal { mean_us, sd_us } => {
                write!(f, "normal:{},{}", format_us(mean_us), format_us(sd_us))
            }
            Distribution::LogNormal { median_us, sigma } => {
                write!(f, "lognormal:{},{sigma}", format_us(median_us))
            }
        }
    }
}

/// The most output tokens a response may be configured to carry (the catalog holds their text).
pub const MAX_TOKENS: u32 = 1_000_000;

/// How many output tokens a response carries (before a request's `max_tokens` caps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCount {
    Fixed(u32),
    Uniform { lo: u32, hi: u32 },
}

impl TokenCount {
    /// The largest count a draw can give.
    pub fn max(&self) -> u32 {
        match *self {
            TokenCount::Fixed(n) => n,
            TokenCount::Uniform { hi, .. } => hi,
        }
    }

    fn sample<R: Rng>(&self, rng: &mut R) -> u32 {
        match *self {
            TokenCount::Fixed(n) => n,
            TokenCount::Uniform { lo, hi } => rng.random_range(lo..=hi),
        }
    }
}

impl FromStr for TokenCount {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || SpecError::Tokens(s.to_string());
        let t = s.trim();
        let count = |v: &str| {
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_TOKENS).contains(n))
        };
        if let Some(range) = t.strip_prefix("uniform:") {
            let (lo, hi) = range.split_once("..").ok_or_else(err)?;
            let (lo, hi) = (count(lo).ok_or_else(err)?, count(hi).ok_or_else(err)?);
            if lo > hi {
                return Err(err());
            }
            return Ok(TokenCount::Uniform { lo, hi });
        }
        count(t).map(TokenCount::Fixed).ok_or_else(err)
    }
}

impl fmt::Display for TokenCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TokenCount::Fixed(n) => write!(f, "{n}"),
            TokenCount::Uniform { lo, hi } => write!(f, "uniform:{lo}..{hi}"),
        }
    }
}

/// The whole latency model of the mock. The default adds no latency and answers 16 tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyModel {
    /// Time to a whole non-streaming response (`--latency`). `None`: the stream's own e2e
    /// (`ttft + itl × (tokens − 1)`), so both modes of one request take equally long.
    pub response: Option<Distribution>,
    /// Time from the request to the first output token of a stream.
    pub ttft: Distribution,
    /// Gap between consecutive output tokens of a stream.
    pub itl: Distribution,
    /// Output length in tokens.
    pub tokens: TokenCount,
}

impl Default for LatencyModel {
    fn default() -> Self {
        LatencyModel {
            response: None,
            ttft: Distribution::ZERO,
            itl: Distribution::ZERO,
            tokens: TokenCount::Fixed(16),
        }
    }
}

impl LatencyModel {
    /// True when no response ever waits, so the mock needs no timer at all.
    pub fn is_instant(&self) -> bool {
        self.response.is_none_or(|d| d.is_zero()) && self.ttft.is_zero() && self.itl.is_zero()
    }

    /// The draws of request `ordinal` under `seed` (`--seed`). A pure function of both.
    pub fn request(&self, seed: u64, ordinal: u64) -> RequestDraw {
        let mut rng = seeded::rng(seed, Stream::Latency, ordinal);
        let tokens = self.tokens.sample(&mut rng);
        RequestDraw {
            model: *self,
            rng,
            tokens,
            added_us: 0,
            ttft_ahead: NOT_DRAWN,
        }
    }
}

/// [`RequestDraw`]'s time to first token not drawn ahead.
const NOT_DRAWN: u64 = u64::MAX;

/// The random draws of one request, taken in a fixed order: tokens, then (for a stream) the
/// time to first token and each inter-token gap, or (non-streaming) the whole latency.
#[derive(Debug, Clone)]
pub struct RequestDraw {
    model: LatencyModel,
    rng: Pcg64Mcg,
    tokens: u32,
    /// Time added before the first token (a prefill model's), beyond the draw.
    added_us: u64,
    /// The time to first token, once drawn ahead by [`RequestDraw::planned_ttft_us`]
    /// ([`NOT_DRAWN`] until then; a plain number keeps the draw, moved a few times a request,
    /// small).
    ttft_ahead: u64,
}

impl RequestDraw {
    /// Output tokens this request would produce without a `max_tokens` cap.
    pub fn tokens(&self) -> u32 {
        self.tokens
    }

    /// Time to first token, in microseconds. Call once, before [`RequestDraw::itl_us`].
    pub fn ttft_us(&mut self) -> u64 {
        if self.ttft_ahead != NOT_DRAWN {
            return std::mem::replace(&mut self.ttft_ahead, NOT_DRAWN);
        }
        self.model.ttft.sample_us(&mut self.rng) + self.added_us
    }

    /// Adds `us` before the first token (and to a whole answer's time).
    pub fn add_before_first_token(&mut self, us: u64) {
        self.added_us += us;
    }

    /// The time to first token, drawn now and kept for [`RequestDraw::ttft_us`]: the same
    /// draws in the same order as without the look ahead.
    pub fn planned_ttft_us(&mut self) -> u64 {
        let us = self.ttft_us();
        self.ttft_ahead = us;
        us
    }

    /// The next inter-token gap, in microseconds.
    pub fn itl_us(&mut self) -> u64 {
        self.model.itl.sample_us(&mut self.rng)
    }

    /// Time to a whole non-streaming response producing `tokens` tokens, in microseconds.
    pub fn response_us(&mut self, tokens: u32) -> u64 {
        if let Some(response) = self.model.response {
            return response.sample_us(&mut self.rng) + self.added_us;
        }
        let mut total = self.ttft_us();
        if let Distribution::Fixed { us } = self.model.itl {
            return total + us * u64::from(tokens.saturating_sub(1));
        }
        for _ in 1..tokens {
            total += self.itl_us();
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn parses_every_form() {
        assert_eq!("20ms".parse(), Ok(Distribution::Fixed { us: 20_000 }));
        assert_eq!("0".parse(), Ok(Distribution::ZERO));
        assert_eq!("250us".parse(), Ok(Distribution::Fixed { us: 250 }));
        assert_eq!("1.5s".parse(), Ok(Distribution::Fixed { us: 1_500_000 }));
        assert_eq!(
            "uniform:10ms..30ms".parse(),
            Ok(Distribution::Uniform {
                lo_us: 10_000,
                hi_us: 30_000
            })
        );
        assert_eq!(
            "normal:20ms,5ms".parse(),
            Ok(Distribution::Normal {
                mean_us: 20_000,
                sd_us: 5_000
            })
        );
        assert_eq!(
            "lognormal:50ms,0.5".parse(),
            Ok(Distribution::LogNormal {
                median_us: 50_000,
                sigma: 0.5
            })
        );
    }

    #[test]
    fn rejects_nonsense_with_the_expected_format() {
        for bad in [
            "",
            "20",
            "fast",
            "uniform:30ms..10ms",
            "lognormal:5ms,-1",
            "weird:1ms",
        ] {
            let err = bad.parse::<Distribution>().unwrap_err();
            assert!(
                err.to_string().contains("expected a duration"),
                "{bad}: {err}"
            );
        }
        for bad in ["0", "-3", "x", "uniform:5..2", "1000001"] {
            assert!(bad.parse::<TokenCount>().is_err(), "{bad}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "0",
            "20ms",
            "250us",
            "2s",
            "uniform:10ms..30ms",
            "lognormal:50ms,0.5",
        ] {
            let d: Distribution = s.parse().unwrap();
            assert_eq!(d.to_string(), s);
        }
        for s in ["16", "uniform:10..100"] {
            assert_eq!(s.parse::<TokenCount>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn draws_are_a_pure_function_of_seed_and_ordinal() {
        let model = LatencyModel {
            ttft: "lognormal:50ms,0.5".parse().unwrap(),
            itl: "uniform:1ms..9ms".parse().unwrap(),
            tokens: "uniform:1..100".parse().unwrap(),
            ..LatencyModel::default()
        };
        let trace = |ordinal| {
            let mut d = model.request(7, ordinal);
            (d.tokens(), d.ttft_us(), d.itl_us(), d.itl_us())
        };
        assert_eq!(trace(42), trace(42));
        assert_ne!(trace(42), trace(43));
        let mut d = model.request(8, 42);
        assert_ne!((d.tokens(), d.ttft_us(), d.itl_us(), d.itl_us()), trace(42));
    }

    #[test]
    fn distributions_have_the_right_centre() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let n = 20_000;
        let mean = |d: Distribution, rng: &mut Pcg64Mcg| {
            (0..n).map(|_| d.sample_us(rng) as f64).sum::<f64>() / n as f64
        };
        let uniform: Distribution = "uniform:10ms..30ms".parse().unwrap();
        assert!((mean(uniform, &mut rng) - 20_000.0).abs() < 300.0);
        let normal: Distribution = "normal:20ms,2ms".parse().unwrap();
        assert!((mean(normal, &mut rng) - 20_000.0).abs() < 100.0);
        let lognormal: Distribution = "lognormal:50ms,0.5".parse().unwrap();
        let mut draws: Vec<u64> = (0..n).map(|_| lognormal.sample_us(&mut rng)).collect();
        draws.sort_unstable();
        let median = draws[n / 2] as f64;
        assert!((median - 50_000.0).abs() < 1_500.0, "median {median}");
    }

    #[test]
    fn non_streaming_latency_defaults_to_the_stream_e2e() {
        let model = LatencyModel {
            ttft: "100ms".parse().unwrap(),
            itl: "10ms".parse().unwrap(),
            ..LatencyModel::default()
        };
        assert_eq!(model.request(0, 0).response_us(60), 100_000 + 59 * 10_000);
        let fixed = LatencyModel {
            response: Some("5ms".parse().unwrap()),
            ..model
        };
        assert_eq!(fixed.request(0, 0).response_us(60), 5_000);
        assert!(!model.is_instant());
        assert!(LatencyModel::default().is_instant());
    }
}
