//! A session line's `branches`: sub-agents that fork off one turn and join a later one.
//!
//! `"branches": [{"after_turn": 2, "join_turn": 4, "system": "…" | "system_tokens": N,
//! "turns": [...]}]`, turns counted from 1 as the results count them. A branch starts when
//! turn `after_turn` is answered and turn `join_turn` (default: the next) waits for it.

use serde_json::{Map, Value};

use super::fields::{check_keys, count, text, At, Bad, MAX_TEXT_TOKENS};
use super::text::{rng_of, words};
use super::turn::{turn, Defaults};
use super::{Branch, Message, Role, MAX_BRANCHES, MAX_TURNS};

const KEYS: [&str; 5] = [
    "after_turn",
    "join_turn",
    "system",
    "system_tokens",
    "turns",
];

/// The branches of a session line whose session has `turns` turns; none when it names none.
pub(crate) fn branches(
    obj: &Map<String, Value>,
    id: &str,
    index: usize,
    turns: usize,
    defaults: &Defaults,
) -> Result<Vec<Branch>, Bad> {
    let list = match obj.get("branches") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) if list.len() <= MAX_BRANCHES => list,
        Some(Value::Array(list)) => {
            return Err(Bad::new(
                "branches",
                format!(
                    "{} branches, more than the {MAX_BRANCHES} a session may hold",
                    list.len()
                ),
            ))
        }
        Some(_) => return Err(Bad::new("branches", "expected an array of branches")),
    };
    let mut out = list
        .iter()
        .enumerate()
        .map(|(b, value)| branch(value, b, id, index, turns, defaults))
        .collect::<Result<Vec<Branch>, Bad>>()?;
    // In the order they fork (the file's among those forking off one turn).
    out.sort_by_key(|b| b.after);
    Ok(out)
}

fn branch(
    value: &Value,
    b: usize,
    id: &str,
    index: usize,
    session_turns: usize,
    defaults: &Defaults,
) -> Result<Branch, Bad> {
    let at = At {
        prefix: "branches",
        index: Some(b),
    };
    let obj = value.as_object().ok_or_else(|| {
        Bad::new(
            format!("branches[{b}]"),
            "expected a branch (a JSON object)",
        )
    })?;
    check_keys(obj, &KEYS, &[], at)?;
    if session_turns < 2 {
        return Err(Bad::new(
            format!("branches[{b}]"),
            "a branch forks off one turn and joins a later one: its session needs two turns",
        ));
    }
    let last = session_turns as u64;
    let after = count(obj, "after_turn", at, 1, last - 1)?.ok_or_else(|| {
        Bad::new(
            at.path("after_turn"),
            "missing: the turn whose answer starts the branch",
        )
    })?;
    let join = count(obj, "join_turn", at, after + 1, last)?.unwrap_or(after + 1);
    let system = text(obj, "system", at)?;
    let system_tokens = count(obj, "system_tokens", at, 1, MAX_TEXT_TOKENS)?;
    let system = match (system, system_tokens) {
        (Some(_), Some(_)) => {
            return Err(Bad::new(
                at.path("system_tokens"),
                "give system (its text) or system_tokens (its length), not both",
            ))
        }
        (Some(t), None) if t.is_empty() => return Err(Bad::new(at.path("system"), "empty text")),
        (Some(t), None) => Some(t),
        (None, Some(n)) => Some(words(
            &format!("Sub-agent {b} of {id}. "),
            n,
            &mut rng_of(!(index as u64), 1 << 32 | b as u64),
        )),
        (None, None) => None,
    };
    let list = match obj.get("turns") {
        Some(Value::Array(list)) if !list.is_empty() && list.len() <= MAX_TURNS => list,
        _ => {
            return Err(Bad::new(
                at.path("turns"),
                format!("expected an array of 1 to {MAX_TURNS} turns"),
            ))
        }
    };
    let mut turns = Vec::with_capacity(list.len());
    for (k, value) in list.iter().enumerate() {
        let (t, _) = turn(value, k, defaults, |n| {
            let mut rng = rng_of(index as u64, (b as u64 + 1) << 32 | (k as u64 + 1));
            words(&format!("Branch {b} turn {} of {id}. ", k + 1), n, &mut rng)
        })
        .map_err(|bad| Bad::new(format!("branches[{b}].{}", bad.field), bad.reason))?;
        turns.push(t);
    }
    Ok(Branch {
        after: after as usize - 1,
        join: join as usize - 1,
        preamble: system
            .map(|content| Message {
                role: Role::System,
                content,
            })
            .into_iter()
            .collect(),
        turns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DEFAULTS: Defaults = Defaults {
        tool_rounds: 0,
        tool_result_tokens: 64,
        has_tools: false,
    };

    fn read(v: Value, turns: usize) -> Result<Vec<Branch>, Bad> {
        branches(v.as_object().unwrap(), "s", 0, turns, &DEFAULTS)
    }

    #[test]
    fn a_branch_forks_off_a_turn_and_joins_the_next_unless_told() {
        let b = read(
            json!({"branches": [
                {"after_turn": 1, "turns": [{"text": "look"}, {"tokens": 3}]},
                {"after_turn": 2, "join_turn": 4, "system_tokens": 5, "turns": [{"text": "x"}]}
            ]}),
            4,
        )
        .unwrap();
        assert_eq!((b[0].after, b[0].join, b[0].turns.len()), (0, 1, 2));
        assert!(b[0].preamble.is_empty(), "none of the session's history");
        assert_eq!(b[0].turns[1].user.len(), 12);
        assert_eq!((b[1].after, b[1].join), (1, 3));
        assert_eq!(b[1].preamble[0].content.len(), 20);
        assert!(read(json!({}), 3).unwrap().is_empty());
    }

    #[test]
    fn a_branch_that_cannot_fork_or_join_is_refused_by_its_field() {
        let cases = [
            (json!({"branches": {}}), 3, "branches"),
            (json!({"branches": [1]}), 3, "branches[0]"),
            (
                json!({"branches": [{"turns": [{"text": "x"}]}]}),
                3,
                "branches[0].after_turn",
            ),
            (
                json!({"branches": [{"after_turn": 3, "turns": [{"text": "x"}]}]}),
                3,
                "branches[0].after_turn",
            ),
            (
                json!({"branches": [{"after_turn": 2, "join_turn": 2, "turns": [{"text": "x"}]}]}),
                3,
                "branches[0].join_turn",
            ),
            (
                json!({"branches": [{"after_turn": 1, "turns": []}]}),
                3,
                "branches[0].turns",
            ),
            (
                json!({"branches": [{"after_turn": 1, "turns": [{"tokens": 0}]}]}),
                3,
                "branches[0].turns[0].tokens",
            ),
            (
                json!({"branches": [{"after_turn": 1, "agent": "w", "turns": [{"text": "x"}]}]}),
                3,
                "branches[0].agent",
            ),
            (
                json!({"branches": [{"after_turn": 1, "turns": [{"text": "x"}]}]}),
                1,
                "branches[0]",
            ),
        ];
        for (line, turns, field) in cases {
            let bad = read(line.clone(), turns).unwrap_err();
            assert_eq!(bad.field, field, "{line}: {bad:?}");
        }
    }
}
