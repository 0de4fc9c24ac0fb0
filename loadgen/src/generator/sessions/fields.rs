//! Reading one field of a session file's JSON object: its type and range checked, or [`Bad`]
//! naming the field (as a path like `turns[2].text`) and what was expected.

use serde_json::{Map, Value};

use super::MAX_TOOL_ROUNDS;

/// A field that cannot be used: its path and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bad {
    /// Empty for the whole line.
    pub field: String,
    pub reason: String,
}

impl Bad {
    pub(crate) fn new(field: impl Into<String>, reason: impl Into<String>) -> Bad {
        Bad {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Where an object's fields are: `""` for a line's own, `turns[2].` for a turn's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub prefix: &'a str,
    pub index: Option<usize>,
}

impl At<'_> {
    /// The path of field `key` here.
    pub(crate) fn path(&self, key: &str) -> String {
        match self.index {
            Some(i) => format!("{}[{i}].{key}", self.prefix),
            None => key.to_string(),
        }
    }
}

/// A text field, if present.
pub(crate) fn text(obj: &Map<String, Value>, key: &str, at: At) -> Result<Option<String>, Bad> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Bad::new(at.path(key), "expected text (a JSON string)")),
    }
}

/// A whole number from `lo` to `hi`, if present.
pub(crate) fn count(
    obj: &Map<String, Value>,
    key: &str,
    at: At,
    lo: u64,
    hi: u64,
) -> Result<Option<u64>, Bad> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
            _ => Err(Bad::new(
                at.path(key),
                format!("{v} is not a whole number from {lo} to {hi}"),
            )),
        },
    }
}

/// Most milliseconds a think time may last (a day).
const MAX_THINK_MS: f64 = 86_400_000.0;

/// A duration in milliseconds (a number, fractions allowed), as microseconds, if present.
pub(crate) fn millis_us(obj: &Map<String, Value>, key: &str, at: At) -> Result<Option<u64>, Bad> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(ms) if (0.0..=MAX_THINK_MS).contains(&ms) => Ok(Some((ms * 1e3).round() as u64)),
            _ => Err(Bad::new(
                at.path(key),
                format!("{v} is not a number of milliseconds from 0 to {MAX_THINK_MS}"),
            )),
        },
    }
}

/// Refuses a key that is neither in `known` nor given a reason in `refused`.
pub(crate) fn check_keys(
    obj: &Map<String, Value>,
    known: &[&str],
    refused: &[(&str, &str)],
    at: At,
) -> Result<(), Bad> {
    for key in obj.keys() {
        if let Some((_, why)) = refused.iter().find(|(k, _)| k == key) {
            return Err(Bad::new(at.path(key), *why));
        }
        if !known.contains(&key.as_str()) {
            return Err(Bad::new(
                at.path(key),
                format!("unknown field; expected one of {}", known.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A session's id: text or a number, if present.
pub(crate) fn id(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, Bad> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(Bad::new(key, "expected a non-empty string or a number")),
    }
}

/// Most tokens one message (or one tool result) may hold: about 4 MB of text.
pub(crate) const MAX_TEXT_TOKENS: u64 = 1_000_000;

/// `tool_rounds`, if present: a whole number up to the bound, since a tool loop needs one.
pub(crate) fn rounds(obj: &Map<String, Value>, at: At) -> Result<Option<u32>, Bad> {
    let Some(v) = obj.get("tool_rounds").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    match v.as_u64() {
        Some(n) if n <= u64::from(MAX_TOOL_ROUNDS) => Ok(Some(n as u32)),
        _ => Err(Bad::new(
            at.path("tool_rounds"),
            format!(
                "{v}: a tool loop needs a bound, a whole number of rounds from 0 to \
                 {MAX_TOOL_ROUNDS}"
            ),
        )),
    }
}

/// Tool rounds asked for (at `field`) in a session that offers no tools.
pub(crate) fn no_tools(field: String) -> Bad {
    Bad::new(
        field,
        "tool rounds need tools: an upstream calls only the tools a request offers",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    const TURN: At = At {
        prefix: "turns",
        index: Some(2),
    };

    #[test]
    fn fields_are_checked_and_named() {
        let o = obj(json!({"a": "x", "n": 5, "ms": 1.5, "bad": -1, "s": [1]}));
        assert_eq!(text(&o, "a", TURN), Ok(Some("x".into())));
        assert_eq!(text(&o, "zz", TURN), Ok(None));
        assert_eq!(text(&o, "n", TURN).unwrap_err().field, "turns[2].n");
        assert_eq!(count(&o, "n", TURN, 1, 9), Ok(Some(5)));
        assert!(count(&o, "n", TURN, 6, 9).is_err());
        assert!(count(&o, "ms", TURN, 0, 9).is_err());
        assert_eq!(millis_us(&o, "ms", TURN), Ok(Some(1_500)));
        assert!(millis_us(&o, "bad", TURN).is_err());
        assert!(millis_us(&o, "a", TURN).is_err());
        let top = At {
            prefix: "",
            index: None,
        };
        let err = check_keys(&o, &["a", "n", "ms", "bad"], &[("s", "no s")], top).unwrap_err();
        assert_eq!(err, Bad::new("s", "no s"));
        let err = check_keys(&o, &["a"], &[], TURN).unwrap_err();
        assert!(err.reason.starts_with("unknown field"), "{err:?}");
        assert_eq!(id(&o, "n"), Ok(Some("5".into())));
        assert!(id(&o, "s").is_err());
    }
}
