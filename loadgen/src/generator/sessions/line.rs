//! One session line of gatebench's own JSONL, which also reads AIPerf's `multi_turn` lines as
//! they are: the session's own fields here, its turns' in `turn`.
//!
//! `{"session_id", "system" | "system_tokens", "context" | "context_tokens", "model", "tools",
//! "tool_rounds", "tool_result_tokens", "turns": [...], "branches": [...]}`; AIPerf's lines hold only
//! `session_id`, `type` and `turns`, and a file whose lines hold nothing else is labelled as
//! AIPerf's.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::fields::{check_keys, count, id, no_tools, rounds, text, At, Bad, MAX_TEXT_TOKENS};
use super::text::{rng_of, words};
use super::turn::{turn, Defaults};
use super::{Message, Role, Session, MAX_TURNS};

/// Size of a tool result when a file names none, in tokens.
pub const DEFAULT_TOOL_RESULT_TOKENS: u32 = 64;

/// Fields AIPerf's `multi_turn` lines hold.
const AIPERF_KEYS: [&str; 3] = ["session_id", "type", "turns"];

/// Fields only gatebench's lines hold.
const OWN_KEYS: [&str; 9] = [
    "branches",
    "system",
    "system_tokens",
    "context",
    "context_tokens",
    "model",
    "tools",
    "tool_rounds",
    "tool_result_tokens",
];

const TOP: At = At {
    prefix: "",
    index: None,
};

/// The seed of the words `system_tokens` stands for: one text for every session that names
/// the same count, so it is a shared prefix.
const SYSTEM_SEED: u64 = 0x0051_57e4;

/// The session a line holds (the `index`-th of its file), and whether it used a field AIPerf's
/// lines do not have.
pub(crate) fn session(obj: &Map<String, Value>, index: usize) -> Result<(Session, bool), Bad> {
    let known: Vec<&str> = AIPERF_KEYS.iter().chain(&OWN_KEYS).copied().collect();
    check_keys(obj, &known, &[], TOP)?;
    if let Some(kind) = obj.get("type") {
        if kind != "multi_turn" {
            return Err(Bad::new(
                "type",
                format!("{kind} is not multi_turn: only AIPerf's multi_turn lines are sessions"),
            ));
        }
    }
    let id = id(obj, "session_id")?.unwrap_or_else(|| format!("session-{index}"));
    let mut preamble = Vec::new();
    let system = text_or_tokens(obj, "system", |n| {
        words("System prompt. ", n, &mut rng_of(SYSTEM_SEED, n))
    })?;
    let context = text_or_tokens(obj, "context", |n| {
        words(
            &format!("Context of {id}. "),
            n,
            &mut rng_of(!(index as u64), 0),
        )
    })?;
    for content in [system, context].into_iter().flatten() {
        preamble.push(Message {
            role: Role::System,
            content,
        });
    }
    let tools = tools(obj)?;
    let defaults = Defaults {
        tool_rounds: rounds(obj, TOP)?.unwrap_or(0),
        tool_result_tokens: count(obj, "tool_result_tokens", TOP, 1, MAX_TEXT_TOKENS)?
            .map_or(DEFAULT_TOOL_RESULT_TOKENS, |n| n as u32),
        has_tools: tools.is_some(),
    };
    if defaults.tool_rounds > 0 && tools.is_none() {
        return Err(no_tools("tool_rounds".into()));
    }
    let turns = turns(obj, &id, index, &defaults)?;
    let branches = super::branch::branches(obj, &id, index, turns.0.len(), &defaults)?;
    let model = text(obj, "model", TOP)?;
    let own = obj.keys().any(|k| OWN_KEYS.contains(&k.as_str()));
    let session = Session {
        id,
        preamble,
        tools,
        model,
        turns: turns.0,
        branches,
    };
    Ok((session, own || turns.1))
}

/// The turns of a line, and whether one used a field AIPerf's turns do not have.
fn turns(
    obj: &Map<String, Value>,
    id: &str,
    index: usize,
    defaults: &Defaults,
) -> Result<(Vec<super::Turn>, bool), Bad> {
    let list = match obj.get("turns") {
        None => {
            return Err(Bad::new(
                "turns",
                "missing: a session needs at least one turn",
            ))
        }
        Some(Value::Array(list)) => list,
        Some(_) => return Err(Bad::new("turns", "expected an array of turns")),
    };
    if list.is_empty() {
        return Err(Bad::new(
            "turns",
            "empty: a session needs at least one turn",
        ));
    }
    if list.len() > MAX_TURNS {
        return Err(Bad::new(
            "turns",
            format!(
                "{} turns, more than the {MAX_TURNS} a session may hold",
                list.len()
            ),
        ));
    }
    let mut own = false;
    let mut turns = Vec::with_capacity(list.len());
    for (k, value) in list.iter().enumerate() {
        let (t, t_own) = turn(value, k, defaults, |n| {
            let mut rng = rng_of(index as u64, k as u64 + 1);
            words(&format!("Turn {} of {id}. ", k + 1), n, &mut rng)
        })?;
        own |= t_own;
        turns.push(t);
    }
    Ok((turns, own))
}

/// `KEY` (text) or `KEY_tokens` (a count, the text made by `make`), not both; `None` if
/// neither.
fn text_or_tokens(
    obj: &Map<String, Value>,
    key: &str,
    make: impl FnOnce(u64) -> String,
) -> Result<Option<String>, Bad> {
    let tokens_key = format!("{key}_tokens");
    let given = text(obj, key, TOP)?;
    let tokens = count(obj, &tokens_key, TOP, 1, MAX_TEXT_TOKENS)?;
    match (given, tokens) {
        (Some(_), Some(_)) => Err(Bad::new(
            tokens_key,
            format!("give {key} (its text) or {key}_tokens (its length), not both"),
        )),
        (Some(t), None) if t.is_empty() => Err(Bad::new(key, "empty text")),
        (Some(t), None) => Ok(Some(t)),
        (None, Some(n)) => Ok(Some(make(n))),
        (None, None) => Ok(None),
    }
}

/// `tools`: a non-empty OpenAI tools array, each entry an object with a `type`.
fn tools(obj: &Map<String, Value>) -> Result<Option<Arc<Value>>, Bad> {
    let Some(value) = obj.get("tools").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let list = value
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| Bad::new("tools", "expected a non-empty array of tool definitions"))?;
    if let Some(i) = list.iter().position(|t| !t["type"].is_string()) {
        return Err(Bad::new(
            format!("tools[{i}]"),
            "expected a tool definition like {\"type\": \"function\", \"function\": {\"name\": ...}}",
        ));
    }
    Ok(Some(Arc::new(value.clone())))
}
