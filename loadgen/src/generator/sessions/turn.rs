//! One turn of a session line: gatebench's fields (`text` or `tokens`, `think_ms`,
//! `max_tokens`, `tool_rounds`, `tool_result_tokens`) and AIPerf's (`text` or `texts`, `delay`,
//! `output_length`, `role`), with what AIPerf allows and gatebench does not send refused by name.

use serde_json::{Map, Value};

use super::fields::{
    check_keys, count, millis_us, no_tools, rounds, text, At, Bad, MAX_TEXT_TOKENS,
};
use super::Turn;

/// What a turn takes from its session when it names nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Defaults {
    pub tool_rounds: u32,
    pub tool_result_tokens: u32,
    /// Whether the session offers tools (tool rounds need them).
    pub has_tools: bool,
}

/// Fields AIPerf's turns hold that are read here.
const AIPERF_KEYS: [&str; 5] = ["text", "texts", "delay", "output_length", "role"];

/// Fields only gatebench's turns hold.
const OWN_KEYS: [&str; 5] = [
    "tokens",
    "think_ms",
    "max_tokens",
    "tool_rounds",
    "tool_result_tokens",
];

const MEDIA: &str = "only text is sent: images, audio and video are not";

/// What AIPerf's turns may hold that is not sent, and why.
const REFUSED: [(&str, &str); 9] = [
    (
        "timestamp",
        "a timestamp fixes when a turn is sent; here a turn waits its think time after the \
         previous answer: give delay (ms) instead",
    ),
    ("image", MEDIA),
    ("images", MEDIA),
    ("image_uuids", MEDIA),
    ("audio", MEDIA),
    ("audios", MEDIA),
    ("video", MEDIA),
    ("videos", MEDIA),
    (
        "extra",
        "extra request fields per turn are not sent; every turn's body is the run's",
    ),
];

/// Turn `k` of a session, and whether it used a field AIPerf's turns do not have; `make` writes
/// the text of a turn given as a count of tokens.
pub(crate) fn turn(
    value: &Value,
    k: usize,
    defaults: &Defaults,
    make: impl FnOnce(u64) -> String,
) -> Result<(Turn, bool), Bad> {
    let at = At {
        prefix: "turns",
        index: Some(k),
    };
    let obj = value
        .as_object()
        .ok_or_else(|| Bad::new(format!("turns[{k}]"), "expected a turn (a JSON object)"))?;
    let known: Vec<&str> = AIPERF_KEYS.iter().chain(&OWN_KEYS).copied().collect();
    check_keys(obj, &known, &REFUSED, at)?;
    if let Some(role) = obj.get("role").filter(|r| !r.is_null() && *r != "user") {
        return Err(Bad::new(
            at.path("role"),
            format!("{role}: only user turns are sent; the upstream writes the answers"),
        ));
    }
    let user = user_text(obj, at, make)?;
    let think_us = one_of(obj, at, ["think_ms", "delay"], millis_us)?;
    let max_tokens = one_of(obj, at, ["max_tokens", "output_length"], |o, key, at| {
        count(o, key, at, 1, u64::from(u32::MAX))
    })?
    .map(|n| n as u32);
    let tool_rounds = rounds(obj, at)?.unwrap_or(defaults.tool_rounds);
    if tool_rounds > 0 && !defaults.has_tools {
        return Err(no_tools(at.path("tool_rounds")));
    }
    let tool_result_tokens = count(obj, "tool_result_tokens", at, 1, MAX_TEXT_TOKENS)?
        .map_or(defaults.tool_result_tokens, |n| n as u32);
    let own = obj.keys().any(|key| OWN_KEYS.contains(&key.as_str()));
    let turn = Turn {
        user,
        think_us,
        max_tokens,
        tool_rounds,
        tool_result_tokens,
    };
    Ok((turn, own))
}

/// The user message: `text`, `texts` (AIPerf's list, joined by newlines) or `tokens`, exactly
/// one of them.
fn user_text(
    obj: &Map<String, Value>,
    at: At,
    make: impl FnOnce(u64) -> String,
) -> Result<String, Bad> {
    let given: Vec<&str> = ["text", "texts", "tokens"]
        .into_iter()
        .filter(|k| obj.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    match given.as_slice() {
        [] => Err(Bad::new(
            at.path("text"),
            "missing: a turn needs its text (text) or its length (tokens)",
        )),
        ["text"] => match text(obj, "text", at)? {
            Some(t) if !t.is_empty() => Ok(t),
            _ => Err(Bad::new(at.path("text"), "empty text")),
        },
        ["texts"] => texts(&obj["texts"], at),
        [_] => {
            let n = count(obj, "tokens", at, 1, MAX_TEXT_TOKENS)?;
            // Invariant: the one field given is tokens, there and not null.
            Ok(make(n.expect("tokens present")))
        }
        [a, b, ..] => Err(Bad::new(
            at.path(b),
            format!("give one of text, texts and tokens, not {a} and {b}"),
        )),
    }
}

/// AIPerf's `texts`: strings, or `{"name", "contents": [strings]}` objects, joined by newlines.
fn texts(value: &Value, at: At) -> Result<String, Bad> {
    let bad = || {
        Bad::new(
            at.path("texts"),
            "expected a non-empty list of strings or of {\"name\", \"contents\": [strings]}",
        )
    };
    let list = value.as_array().filter(|l| !l.is_empty()).ok_or_else(bad)?;
    let mut parts = Vec::new();
    for item in list {
        match item {
            Value::String(s) => parts.push(s.as_str()),
            Value::Object(o) => {
                let contents = o
                    .get("contents")
                    .and_then(Value::as_array)
                    .ok_or_else(bad)?;
                for c in contents {
                    parts.push(c.as_str().ok_or_else(bad)?);
                }
            }
            _ => return Err(bad()),
        }
    }
    let joined = parts.join("\n");
    if joined.is_empty() {
        return Err(Bad::new(at.path("texts"), "empty text"));
    }
    Ok(joined)
}

/// The value of whichever of two synonyms is given (`read` checks it); both is refused.
fn one_of<T>(
    obj: &Map<String, Value>,
    at: At,
    [a, b]: [&str; 2],
    read: impl Fn(&Map<String, Value>, &str, At) -> Result<Option<T>, Bad>,
) -> Result<Option<T>, Bad> {
    match (read(obj, a, at)?, read(obj, b, at)?) {
        (Some(_), Some(_)) => Err(Bad::new(
            at.path(b),
            format!("{b} is another name for {a}: give one"),
        )),
        (x, None) | (None, x) => Ok(x),
    }
}
