//! Bedrock's Converse answers: a whole response's `output.message.content` blocks (text,
//! `toolUse`) and `usage`, or a `converse-stream` body of AWS event stream messages
//! (`contentBlockStart` opens a tool use, `contentBlockDelta` carries text or a piece of a tool
//! use's input JSON, `metadata` the usage). Converse's `inputTokens` leaves out the tokens read
//! from and written to the cache (`cacheReadInputTokens`, `cacheWriteInputTokens`), as AWS
//! documents and the mock answers: the prompt is the three together.

use gatebench_shared::eventstream;
use serde_json::Value;

use super::{text_of, Answer, ToolCall};
use crate::wire::outcome::CacheUsage;

/// True for a whole Converse response.
pub(super) fn is_response(value: &Value) -> bool {
    value.pointer("/output/message").is_some()
}

/// Adds a whole response's blocks and usage to the answer.
pub(super) fn response(answer: &mut Answer, response: &Value) {
    let blocks = response
        .pointer("/output/message/content")
        .and_then(Value::as_array);
    for block in blocks.into_iter().flatten() {
        if let Some(text) = block.get("text").and_then(Value::as_str) {
            answer.text.push_str(text);
        } else if let Some(tool) = block.get("toolUse") {
            answer.calls.push(ToolCall {
                id: text_of(tool, "/toolUseId"),
                name: text_of(tool, "/name"),
                arguments: tool
                    .get("input")
                    .map_or_else(|| "{}".into(), Value::to_string),
                id_made: false,
            });
        }
    }
    usage(answer, response.get("usage"));
}

/// Adds a stream's events to the answer; `None` when its bytes are not whole event stream
/// messages.
pub(super) fn stream(answer: &mut Answer, body: &[u8]) -> Option<()> {
    let mut at = 0;
    while at < body.len() {
        let (message, used) = eventstream::decode(&body[at..]).ok()??;
        at += used;
        if message.header(":message-type") != Some("event") {
            // An exception: the exchange already failed on it.
            continue;
        }
        let Ok(event) = serde_json::from_slice::<Value>(&message.payload) else {
            continue;
        };
        match message.header(":event-type") {
            Some("contentBlockStart") => {
                if let Some(tool) = event.pointer("/start/toolUse") {
                    answer.calls.push(ToolCall {
                        id: text_of(tool, "/toolUseId"),
                        name: text_of(tool, "/name"),
                        arguments: String::new(),
                        id_made: false,
                    });
                }
            }
            Some("contentBlockDelta") => {
                if let Some(text) = event.pointer("/delta/text").and_then(Value::as_str) {
                    answer.text.push_str(text);
                } else if let Some(input) = event
                    .pointer("/delta/toolUse/input")
                    .and_then(Value::as_str)
                {
                    if let Some(call) = answer.calls.last_mut() {
                        call.arguments.push_str(input);
                    }
                }
            }
            Some("metadata") => usage(answer, event.get("usage")),
            _ => {}
        }
    }
    Some(())
}

/// The prompt and its cache from a Converse `usage`; the cache fields' presence says whether
/// a hit or a miss can be told.
fn usage(answer: &mut Answer, usage: Option<&Value>) {
    let n = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64);
    let Some(input) = n("inputTokens") else {
        return;
    };
    let (read, written) = (n("cacheReadInputTokens"), n("cacheWriteInputTokens"));
    answer.cache = Some(CacheUsage {
        reported: read.is_some() || written.is_some(),
        prompt_tokens: input + read.unwrap_or(0) + written.unwrap_or(0),
        cached_tokens: read.unwrap_or(0),
        written_tokens: written.unwrap_or(0),
    });
}

#[cfg(test)]
mod tests {
    use gatebench_shared::eventstream::event;

    use super::super::read;

    #[test]
    fn a_whole_converse_answer_counts_the_cache_beside_the_input() {
        let body = br#"{"output":{"message":{"role":"assistant","content":[{"text":"Looking."},
            {"toolUse":{"toolUseId":"tooluse_1","name":"look","input":{"q":1}}}]}},
            "stopReason":"tool_use","usage":{"inputTokens":52,"outputTokens":3,"totalTokens":2203,
            "cacheReadInputTokens":2048,"cacheWriteInputTokens":100},"metrics":{"latencyMs":0}}"#;
        let a = read(body, false).unwrap();
        assert_eq!(a.text, "Looking.");
        assert_eq!(
            (a.calls[0].id.as_str(), a.calls[0].arguments.as_str()),
            ("tooluse_1", r#"{"q":1}"#)
        );
        let cache = a.cache.unwrap();
        assert_eq!(cache.prompt_tokens, 2200);
        assert_eq!((cache.cached_tokens, cache.written_tokens), (2048, 100));
        assert!(cache.reported && cache.hit());
        let plain = br#"{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},
            "usage":{"inputTokens":10,"outputTokens":1,"totalTokens":11}}"#;
        assert!(!read(plain, false).unwrap().cache.unwrap().reported);
    }

    #[test]
    fn a_converse_stream_joins_its_deltas_and_tool_input_and_reads_the_metadata() {
        let events: [(&str, &str); 7] = [
            ("messageStart", r#"{"role":"assistant"}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"He"}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"y"}}"#,
            ),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"look"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"q\":"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"2}"}}}"#,
            ),
            (
                "metadata",
                r#"{"usage":{"inputTokens":40,"outputTokens":4,"totalTokens":1068,"cacheReadInputTokens":1024,"cacheWriteInputTokens":0},"metrics":{"latencyMs":0}}"#,
            ),
        ];
        let body: Vec<u8> = events
            .iter()
            .flat_map(|(kind, json)| event(kind, json.as_bytes()))
            .collect();
        let a = read(&body, true).unwrap();
        assert_eq!(a.text, "Hey");
        assert_eq!(
            (a.calls[0].id.as_str(), a.calls[0].arguments.as_str()),
            ("t1", r#"{"q":2}"#)
        );
        let cache = a.cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (1064, 1024));
        assert!(
            read(&body[..body.len() - 3], true).is_none(),
            "a cut message"
        );
    }
}
