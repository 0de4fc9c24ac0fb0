//! vLLM's multi-turn benchmark conversations (`benchmarks/multi_turn`): a JSON array of
//! `{"id", "messages": [{"role", "content"}]}`, as its `convert_sharegpt_to_openai.py` writes
//! them (also read one a line). Leading system messages become the preamble, each user message
//! a turn; the file's assistant messages are not sent, since every turn resends the upstream's
//! own answers, as vLLM's benchmark does.

use serde_json::{Map, Value};

use super::fields::{id, Bad};
use super::{Message, Role, Session, Turn, MAX_TURNS};

/// The session a conversation holds (the `index`-th of its file).
pub(crate) fn conversation(obj: &Map<String, Value>, index: usize) -> Result<Session, Bad> {
    let id = id(obj, "id")?.unwrap_or_else(|| format!("conversation-{index}"));
    let messages = obj
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| Bad::new("messages", "expected an array of {\"role\", \"content\"}"))?;
    let mut preamble = Vec::new();
    let mut turns = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let field = format!("messages[{i}]");
        let role = m["role"].as_str().unwrap_or("");
        let content = match &m["content"] {
            Value::String(s) if !s.is_empty() => s.clone(),
            _ => {
                return Err(Bad::new(
                    format!("{field}.content"),
                    "expected the message's text (a non-empty string)",
                ))
            }
        };
        match role {
            "system" if turns.is_empty() => preamble.push(Message {
                role: Role::System,
                content,
            }),
            "user" => turns.push(Turn {
                user: content,
                think_us: None,
                max_tokens: None,
                tool_rounds: 0,
                tool_result_tokens: super::line::DEFAULT_TOOL_RESULT_TOKENS,
            }),
            "assistant" => {}
            other => {
                return Err(Bad::new(
                    format!("{field}.role"),
                    format!(
                        "'{other}': expected user or assistant (system only before the first \
                         user message)"
                    ),
                ))
            }
        }
    }
    if turns.is_empty() {
        return Err(Bad::new(
            "messages",
            "no user message: a session needs at least one turn",
        ));
    }
    if turns.len() > MAX_TURNS {
        return Err(Bad::new(
            "messages",
            format!(
                "{} user messages, more than the {MAX_TURNS} turns a session may hold",
                turns.len()
            ),
        ));
    }
    Ok(Session {
        id,
        preamble,
        tools: None,
        model: None,
        turns,
        branches: Vec::new(),
    })
}

/// Why an object of a vLLM file is not a conversation, when it is another of its files.
pub(crate) fn not_conversation(obj: &Map<String, Value>) -> Option<Bad> {
    if obj.contains_key("filetype") {
        return Some(Bad::new(
            "filetype",
            "a vLLM generation config, not conversations: write sessions with \
             `loadgen corpus --sessions N` instead",
        ));
    }
    if obj.contains_key("conversations") && !obj.contains_key("messages") {
        return Some(Bad::new(
            "conversations",
            "ShareGPT's form (from/value): convert it with vLLM's \
             benchmarks/multi_turn/convert_sharegpt_to_openai.py first",
        ));
    }
    None
}

/// Byte offsets where each element of the JSON array `text` starts (strings skipped, so a
/// bracket inside one does not count).
pub(crate) fn element_starts(text: &str) -> Vec<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut want = false;
    let mut starts = Vec::new();
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if want && !b.is_ascii_whitespace() && b != b']' {
            starts.push(i);
            want = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                want = depth == 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => want = true,
            _ => {}
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_found_past_brackets_in_strings() {
        let text = "[\n {\"a\": \"[}\\\"\"},\n {\"b\": [1, 2]}\n]";
        let starts = element_starts(text);
        assert_eq!(starts.len(), 2);
        assert!(text[starts[0]..].starts_with("{\"a\""));
        assert!(text[starts[1]..].starts_with("{\"b\""));
        assert!(element_starts("[]").is_empty());
    }
}
