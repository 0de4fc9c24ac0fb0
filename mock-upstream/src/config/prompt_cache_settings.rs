//! `--prompt-cache`, `--prompt-cache-ttl` and `--prompt-cache-entries`: whether the mock keeps
//! a prompt cache, how long an entry lives unused, and how many entries it keeps.

use std::time::Duration;

use gatebench_shared::duration::parse_us;

/// The prompt cache's settings. Off by default: answers are the pre-encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptCacheSettings {
    pub on: bool,
    /// How long an entry of the automatic caches (OpenAI, Gemini) lives unused. Anthropic's
    /// and Bedrock's entries live as their request's `ttl` says (5 minutes or an hour).
    pub ttl: Duration,
    /// Entries kept across every key; past it, the least recently used goes.
    pub entries: usize,
}

impl Default for PromptCacheSettings {
    fn default() -> Self {
        PromptCacheSettings {
            on: false,
            ttl: Duration::from_secs(300),
            entries: 100_000,
        }
    }
}

/// A prompt cache setting the mock cannot use.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PromptCacheError {
    #[error("invalid --prompt-cache '{0}': expected on or off")]
    OnOff(String),
    #[error("invalid --prompt-cache-ttl '{0}': expected a duration above 0, like 5m or 300s")]
    Ttl(String),
    #[error("invalid --prompt-cache-entries 0: expected a whole number of entries, at least 1")]
    Entries,
}

impl PromptCacheSettings {
    /// The settings from their flags (`None`: not given).
    pub fn parse(
        on: Option<&str>,
        ttl: Option<&str>,
        entries: Option<usize>,
    ) -> Result<PromptCacheSettings, PromptCacheError> {
        let defaults = PromptCacheSettings::default();
        let on = match on {
            None | Some("off") => false,
            Some("on") => true,
            Some(other) => return Err(PromptCacheError::OnOff(other.to_string())),
        };
        let ttl = match ttl {
            None => defaults.ttl,
            Some(text) => match parse_us(text) {
                Some(us) if us > 0 => Duration::from_micros(us),
                _ => return Err(PromptCacheError::Ttl(text.to_string())),
            },
        };
        let entries = match entries {
            Some(0) => return Err(PromptCacheError::Entries),
            Some(n) => n,
            None => defaults.entries,
        };
        Ok(PromptCacheSettings { on, ttl, entries })
    }

    /// `--prompt-cache` as it is written.
    pub fn on_setting(&self) -> &'static str {
        if self.on {
            "on"
        } else {
            "off"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default_and_every_bad_value_named() {
        assert_eq!(
            PromptCacheSettings::parse(None, None, None),
            Ok(PromptCacheSettings::default())
        );
        let on = PromptCacheSettings::parse(Some("on"), Some("1h"), Some(10)).unwrap();
        assert!(on.on);
        assert_eq!(on.ttl, Duration::from_secs(3600));
        assert_eq!(on.entries, 10);
        let err = |on, ttl, entries| {
            PromptCacheSettings::parse(on, ttl, entries)
                .unwrap_err()
                .to_string()
        };
        assert!(err(Some("yes"), None, None).contains("expected on or off"));
        assert!(err(None, Some("0s"), None).contains("--prompt-cache-ttl '0s'"));
        assert!(err(None, None, Some(0)).contains("at least 1"));
    }
}
