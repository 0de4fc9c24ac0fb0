//! OpenAI's chat completion chunks, read without building a JSON tree of each: a streamed
//! answer of 60 tokens is 60 chunks, read between its last byte and the next request of an
//! agent loop, so their reading is part of a tool round's `build_time`. Any chunk not of the
//! usual form is left to the tree reader, which reads every API's events.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use super::{usage, Answer, ToolCall};
use crate::wire::outcome::MOST_CALLS;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    usage: Option<Value>,
    /// Other APIs' events name their type; a chat chunk does not.
    #[serde(rename = "type", default, deserialize_with = "present")]
    kind: bool,
    /// Gemini's responses, which the tree reader reads as Gemini's whatever else they hold.
    #[serde(default, deserialize_with = "present")]
    candidates: bool,
    #[serde(rename = "usageMetadata", default, deserialize_with = "present")]
    usage_metadata: bool,
}

/// True for a field that is there, whatever it holds (`null` too).
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(field).map(|_| true)
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<CallDelta<'a>>>,
}

#[derive(Deserialize)]
struct CallDelta<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

/// Reads the event `data` into `answer` when it is a chat completion chunk of the usual form,
/// as the tree reader would; false, with `answer` untouched, when it is anything else.
pub(super) fn read(answer: &mut Answer, data: &[u8]) -> bool {
    // serde reads a struct from an array too; the tree reader reads only objects.
    if data.trim_ascii_start().first() != Some(&b'{') {
        return false;
    }
    let Ok(chunk) = serde_json::from_slice::<Chunk>(data) else {
        return false;
    };
    let other = chunk.kind || chunk.candidates || chunk.usage_metadata;
    let Some(choices) = chunk.choices.filter(|_| !other) else {
        return false;
    };
    if let Some(delta) = choices.into_iter().next().and_then(|c| c.delta) {
        if let Some(text) = delta.content {
            answer.text.push_str(&text);
        }
        for part in delta.tool_calls.into_iter().flatten() {
            let at = usize::try_from(part.index.unwrap_or(0)).unwrap_or(usize::MAX);
            if at >= MOST_CALLS {
                continue;
            }
            while answer.calls.len() <= at {
                answer.calls.push(ToolCall::default());
            }
            let call = &mut answer.calls[at];
            call.id.push_str(part.id.as_deref().unwrap_or_default());
            if let Some(function) = part.function {
                call.name
                    .push_str(function.name.as_deref().unwrap_or_default());
                call.arguments
                    .push_str(function.arguments.as_deref().unwrap_or_default());
            }
        }
    }
    usage(answer, chunk.usage.as_ref());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `events` read by this reader where it takes them, and by the tree reader alone.
    fn both(events: &[&str]) -> (Answer, Answer, usize) {
        let taken = events
            .iter()
            .filter(|data| read(&mut Answer::default(), data.as_bytes()))
            .count();
        let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        let fast = super::super::read(body.as_bytes(), true).unwrap();
        let mut tree = Answer::default();
        for data in events {
            let event: Value = serde_json::from_str(data).unwrap();
            if super::super::gemini::is_response(&event) {
                super::super::gemini::response(&mut tree, &event);
            } else {
                super::super::chunk(&mut tree, &event);
            }
        }
        (fast, tree, taken)
    }

    #[test]
    fn a_chunk_reads_as_the_tree_reader_reads_it_and_others_are_left_to_it() {
        let events = [
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello \"you\" \u00e9"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"look","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"q\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"content":null},"finish_reason":"tool_calls"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}"#,
            // Not the usual form: left to the tree reader.
            r#"{"choices":[{"delta":{"tool_calls":[{"index":"0","id":7}]}}]}"#,
            r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"!"}}"#,
            r#"{"choices":[{"delta":{"content":"?"}}],"type":null}"#,
            r#"{"choices":[{"delta":{"content":"?"}}],"candidates":null}"#,
            r#"{"choices":[{"delta":{"content":"?"}}],"usageMetadata":{}}"#,
            r#"[[{"delta":{"content":"?"}}]]"#,
        ];
        let (fast, tree, taken) = both(&events);
        assert_eq!(fast, tree);
        assert_eq!(taken, 7);
        assert_eq!(fast.text, "Hello \"you\" \u{e9}!?");
        assert_eq!(fast.calls[1].arguments, "{\"q\":1}");
        assert_eq!(fast.cache.map(|c| c.cached_tokens), Some(8));
    }
}
