//! Where a conversation's bodies mark their prompt for an explicit cache (Anthropic's
//! `cache_control`, Bedrock's `cachePoint`), as a client of those APIs does: after the static
//! prefix (tools and system prompt), and after the newest message, so each turn reads the
//! prefix the turn before wrote (Anthropic's advice for multi-turn conversations). APIs that
//! cache on their own (OpenAI's, Gemini's implicit cache) take no marks.

use std::fmt;
use std::str::FromStr;

/// The breakpoints a session's bodies carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheMarks {
    pub place: Place,
    /// Marks ask for the one-hour life instead of five minutes.
    pub one_hour: bool,
}

/// Which parts of the prompt end at a breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// None: an explicit cache is never used.
    None,
    /// After the system prompt (or the last tool, when there is no system prompt).
    System,
    /// There and after the newest message.
    History,
}

impl CacheMarks {
    /// What a run without `--cache-marks` places: the system prompt and the newest message.
    pub const DEFAULT: CacheMarks = CacheMarks {
        place: Place::History,
        one_hour: false,
    };

    pub fn marks_system(self) -> bool {
        self.place != Place::None
    }

    pub fn marks_history(self) -> bool {
        self.place == Place::History
    }
}

impl FromStr for CacheMarks {
    type Err = ();

    /// `none`, `system` or `history`, with `:1h` for the one-hour life.
    fn from_str(text: &str) -> Result<CacheMarks, ()> {
        let (place, life) = match text.split_once(':') {
            Some((place, life)) => (place, Some(life)),
            None => (text, None),
        };
        let one_hour = match life {
            None | Some("5m") => false,
            Some("1h") => true,
            Some(_) => return Err(()),
        };
        let place = match place {
            "none" if life.is_none() => Place::None,
            "system" => Place::System,
            "history" => Place::History,
            _ => return Err(()),
        };
        Ok(CacheMarks { place, one_hour })
    }
}

impl fmt::Display for CacheMarks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match self.place {
            Place::None => "none",
            Place::System => "system",
            Place::History => "history",
        };
        f.write_str(place)?;
        if self.one_hour {
            f.write_str(":1h")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_back_as_they_are_written_and_bad_ones_are_refused() {
        for text in ["none", "system", "history", "system:1h", "history:1h"] {
            let marks: CacheMarks = text.parse().unwrap();
            assert_eq!(marks.to_string(), text);
        }
        assert_eq!("history:5m".parse(), Ok(CacheMarks::DEFAULT));
        for bad in ["", "all", "history:2h", "none:1h", "History"] {
            assert!(bad.parse::<CacheMarks>().is_err(), "{bad}");
        }
    }
}
