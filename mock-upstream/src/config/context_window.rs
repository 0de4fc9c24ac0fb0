//! `--context-window`: the tokens a model takes, prompt and output together, as a setting (the
//! provider's refusal of a request past it is `crate::api::context`).

/// Context sizes: per model, and for every other model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextWindow {
    /// The size of models not named; `None`: no limit for them.
    pub default: Option<u64>,
    /// Sizes by model name, as requests write it.
    pub models: Vec<(String, u64)>,
}

/// A `--context-window` setting the mock cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --context-window '{0}': expected a size in tokens for every model (128000), sizes per model (gpt-4o=128000,claude-3-5-haiku=200000) or both (gpt-4o=128000,8192), each at least 1")]
pub struct ContextWindowError(pub String);

impl ContextWindow {
    /// Parses `128000`, `gpt-4o=128000,claude-x=200000` or a mix (one bare size at most).
    pub fn parse(text: &str) -> Result<ContextWindow, ContextWindowError> {
        let err = || ContextWindowError(text.to_string());
        let mut window = ContextWindow::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (model, size) = match part.rsplit_once('=') {
                Some((model, size)) => (Some(model.trim()), size),
                None => (None, part),
            };
            let size: u64 = size.trim().replace('_', "").parse().map_err(|_| err())?;
            if size == 0 {
                return Err(err());
            }
            match model {
                Some("") => return Err(err()),
                Some(model) => window.models.push((model.to_string(), size)),
                None if window.default.is_some() => return Err(err()),
                None => window.default = Some(size),
            }
        }
        Ok(window)
    }

    /// The setting as written back; empty when no limit is set.
    pub fn to_setting(&self) -> String {
        let mut parts: Vec<String> = self
            .models
            .iter()
            .map(|(model, size)| format!("{model}={size}"))
            .collect();
        parts.extend(self.default.map(|size| size.to_string()));
        parts.join(",")
    }

    /// True when some limit is set.
    pub fn is_set(&self) -> bool {
        self.default.is_some() || !self.models.is_empty()
    }

    /// The context size of `model` (as the request wrote it, JSON-escaped), if it has one.
    #[inline]
    pub fn of(&self, model: &[u8]) -> Option<u64> {
        if self.models.is_empty() {
            return self.default;
        }
        self.models
            .iter()
            .find(|(name, _)| name.as_bytes() == model)
            .map(|(_, size)| *size)
            .or(self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_per_model_and_for_the_rest() {
        let window = ContextWindow::parse("gpt-4o=128000, claude-x=200_000,8192").unwrap();
        assert_eq!(window.of(b"gpt-4o"), Some(128_000));
        assert_eq!(window.of(b"claude-x"), Some(200_000));
        assert_eq!(window.of(b"other"), Some(8_192));
        assert_eq!(window.to_setting(), "gpt-4o=128000,claude-x=200000,8192");
        assert_eq!(ContextWindow::parse(&window.to_setting()), Ok(window));
        let only = ContextWindow::parse("gpt-4o=100").unwrap();
        assert_eq!(only.of(b"gpt-4o-mini"), None);
        assert!(!ContextWindow::parse("").unwrap().is_set());
        for bad in ["0", "x", "gpt-4o=", "=5", "5,6", "gpt-4o=-1"] {
            assert!(ContextWindow::parse(bad).is_err(), "{bad}");
        }
    }
}
