//! `--rate-limit`: requests and tokens per minute per API key, as a setting (the buckets that
//! enforce it are `crate::ratelimit`).

/// Per-minute limits per API key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimit {
    pub requests_per_minute: Option<u64>,
    pub tokens_per_minute: Option<u64>,
}

/// A `--rate-limit` setting the mock cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid --rate-limit '{0}': expected rpm=N, tpm=N or both (rpm=60,tpm=40000), each at least 1"
)]
pub struct RateLimitError(pub String);

impl RateLimit {
    /// Parses `rpm=60,tpm=40000` (either part may be left out; empty means no limit).
    pub fn parse(text: &str) -> Result<RateLimit, RateLimitError> {
        let mut limit = RateLimit::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let err = || RateLimitError(text.to_string());
            let (name, value) = part.split_once('=').ok_or_else(err)?;
            let value: u64 = value.trim().replace('_', "").parse().map_err(|_| err())?;
            if value == 0 {
                return Err(err());
            }
            match name.trim() {
                "rpm" => limit.requests_per_minute = Some(value),
                "tpm" => limit.tokens_per_minute = Some(value),
                _ => return Err(err()),
            }
        }
        Ok(limit)
    }

    /// True when some limit is set.
    pub fn is_set(self) -> bool {
        self.requests_per_minute.is_some() || self.tokens_per_minute.is_some()
    }

    /// The setting as written back.
    pub fn to_setting(self) -> String {
        let mut parts = Vec::new();
        if let Some(rpm) = self.requests_per_minute {
            parts.push(format!("rpm={rpm}"));
        }
        if let Some(tpm) = self.tokens_per_minute {
            parts.push(format!("tpm={tpm}"));
        }
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_are_written_back() {
        let limit = RateLimit::parse("rpm=60, tpm=40_000").unwrap();
        assert_eq!(limit.requests_per_minute, Some(60));
        assert_eq!(limit.tokens_per_minute, Some(40_000));
        assert_eq!(limit.to_setting(), "rpm=60,tpm=40000");
        assert!(!RateLimit::parse("").unwrap().is_set());
        for bad in ["rpm", "rpm=0", "rps=3", "tpm=x", "rpm=-1"] {
            assert!(RateLimit::parse(bad).is_err(), "{bad}");
        }
    }
}
