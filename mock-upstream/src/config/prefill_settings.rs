//! `--prefill-per-token`, `--prefill-slowdown`, `--max-running` and `--max-waiting`: a time to
//! first token that grows with the prompt's uncached tokens, and a bound on the requests
//! running at once with a queue in front of it, as an inference server has.

use std::time::Duration;

use gatebench_shared::duration::parse_us;

/// The prefill model's settings. Off by default: the time to first token is the drawn one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefillSettings {
    /// Added to the time to first token per uncached prompt token.
    pub per_token: Duration,
    /// The factor on that prefill time when `max_running` requests run (1 at one request,
    /// in proportion between; llm-d's simulator's `time-factor-under-load`). Default 1.
    pub slowdown: f64,
    /// Requests running at once; past it, requests wait. Default: no bound.
    pub max_running: Option<usize>,
    /// Requests waiting for a running slot; past it, 429. Default: no bound.
    pub max_waiting: Option<usize>,
}

impl Default for PrefillSettings {
    fn default() -> Self {
        PrefillSettings {
            per_token: Duration::ZERO,
            slowdown: 1.0,
            max_running: None,
            max_waiting: None,
        }
    }
}

/// A prefill setting the mock cannot use.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PrefillError {
    #[error("invalid --prefill-per-token '{0}': expected a duration, like 100us or 0.2ms")]
    PerToken(String),
    #[error("invalid --prefill-slowdown '{0}': expected a factor of at least 1, like 1.5")]
    Slowdown(String),
    #[error("invalid --max-running 0: expected a whole number of requests, at least 1")]
    MaxRunning,
    #[error("invalid --max-waiting: it bounds the queue of --max-running, which is not set")]
    WaitingWithoutRunning,
    #[error(
        "invalid --prefill-slowdown: it scales up to --max-running requests, which is not set"
    )]
    SlowdownWithoutRunning,
}

impl PrefillSettings {
    /// The settings from their flags (`None`: not given).
    pub fn parse(
        per_token: Option<&str>,
        slowdown: Option<&str>,
        max_running: Option<usize>,
        max_waiting: Option<usize>,
    ) -> Result<PrefillSettings, PrefillError> {
        let per_token = match per_token {
            None => Duration::ZERO,
            Some(text) => parse_us(text)
                .map(Duration::from_micros)
                .ok_or_else(|| PrefillError::PerToken(text.to_string()))?,
        };
        let slowdown = match slowdown {
            None => 1.0,
            Some(text) => match text.parse::<f64>() {
                Ok(f) if f.is_finite() && f >= 1.0 => f,
                _ => return Err(PrefillError::Slowdown(text.to_string())),
            },
        };
        if max_running == Some(0) {
            return Err(PrefillError::MaxRunning);
        }
        if max_running.is_none() && max_waiting.is_some() {
            return Err(PrefillError::WaitingWithoutRunning);
        }
        if max_running.is_none() && slowdown > 1.0 {
            return Err(PrefillError::SlowdownWithoutRunning);
        }
        Ok(PrefillSettings {
            per_token,
            slowdown,
            max_running,
            max_waiting,
        })
    }

    /// Whether any of it is on.
    pub fn is_on(&self) -> bool {
        !self.per_token.is_zero() || self.max_running.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_and_every_bad_value_named() {
        let off = PrefillSettings::parse(None, None, None, None).unwrap();
        assert!(!off.is_on());
        let on = PrefillSettings::parse(Some("200us"), Some("2"), Some(4), Some(8)).unwrap();
        assert!(on.is_on());
        assert_eq!(on.per_token, Duration::from_micros(200));
        let err = |p, s, r, w| PrefillSettings::parse(p, s, r, w).unwrap_err().to_string();
        assert!(err(Some("fast"), None, None, None).contains("--prefill-per-token 'fast'"));
        assert!(err(None, Some("0.5"), Some(2), None).contains("at least 1"));
        assert!(err(None, None, Some(0), None).contains("--max-running 0"));
        assert!(err(None, None, None, Some(3)).contains("which is not set"));
        assert!(err(None, Some("2"), None, None).contains("which is not set"));
    }
}
