//! Gemini's answers: a `GenerateContentResponse`, whole or as each event of a stream
//! (`:streamGenerateContent?alt=sse`, one partial response an event): its first candidate's
//! parts (text, `functionCall`) and its `usageMetadata`, whose `promptTokenCount` includes
//! the `cachedContentTokenCount` read from the implicit cache.

use serde_json::Value;

use super::{text_of, Answer, ToolCall};
use crate::wire::outcome::CacheUsage;

/// True for a Gemini response (or a stream's partial one).
pub(super) fn is_response(value: &Value) -> bool {
    value.get("candidates").is_some() || value.get("usageMetadata").is_some()
}

/// Adds a response's parts to the answer: its text (a stream's joined), its function calls
/// (each whole, as Gemini sends them), and its usage (a stream's last one stands).
pub(super) fn response(answer: &mut Answer, response: &Value) {
    let parts = response
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            // A thought summary (`includeThoughts`) is not the answer's text.
            continue;
        }
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            answer.text.push_str(text);
        } else if let Some(call) = part.get("functionCall") {
            let given = call.get("id").and_then(Value::as_str);
            answer.calls.push(ToolCall {
                id: given.map_or_else(|| format!("call_{}", answer.calls.len()), str::to_string),
                name: text_of(call, "/name"),
                arguments: call
                    .get("args")
                    .map_or_else(|| "{}".into(), Value::to_string),
                id_made: given.is_none(),
            });
        }
    }
    usage(answer, response.get("usageMetadata"));
}

/// The prompt and its cache from `usageMetadata`. Gemini leaves `cachedContentTokenCount`
/// out when it is 0, so a usage without it is a miss, not an unreported cache.
fn usage(answer: &mut Answer, meta: Option<&Value>) {
    let n = |key: &str| meta.and_then(|m| m.get(key)).and_then(Value::as_u64);
    let Some(prompt) = n("promptTokenCount") else {
        return;
    };
    answer.cache = Some(CacheUsage {
        prompt_tokens: prompt,
        cached_tokens: n("cachedContentTokenCount").unwrap_or(0),
        written_tokens: 0,
        reported: true,
    });
}

#[cfg(test)]
mod tests {
    use super::super::read;

    #[test]
    fn a_whole_gemini_answer_gives_its_text_calls_and_cache() {
        let body = br#"{"candidates":[{"content":{"parts":[{"text":"Let me look."},
            {"functionCall":{"name":"look","args":{"q":"x"}}},
            {"functionCall":{"id":"fc_1","name":"look","args":{}}}],"role":"model"},
            "finishReason":"STOP","index":0}],
            "usageMetadata":{"promptTokenCount":2100,"candidatesTokenCount":3,"totalTokenCount":2103,
            "cachedContentTokenCount":2048},"modelVersion":"gemini-2.0-flash"}"#;
        let a = read(body, false).unwrap();
        assert_eq!(a.text, "Let me look.");
        assert_eq!(
            (a.calls[0].id.as_str(), a.calls[0].id_made),
            ("call_0", true),
            "an id made from its place"
        );
        assert_eq!(a.calls[0].arguments, r#"{"q":"x"}"#);
        assert_eq!(
            (a.calls[1].id.as_str(), a.calls[1].id_made),
            ("fc_1", false)
        );
        let cache = a.cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (2100, 2048));
        assert!(cache.reported && cache.hit());
    }

    #[test]
    fn a_gemini_stream_joins_its_parts_and_takes_the_last_usage() {
        let body = b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9}}\r\n\r\n\
            data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n\
            data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"!\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\
            \"usageMetadata\":{\"promptTokenCount\":1200,\"candidatesTokenCount\":3,\"totalTokenCount\":1203}}\r\n\r\n";
        let a = read(body, true).unwrap();
        assert_eq!(a.text, "Hello!");
        let cache = a.cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (1200, 0));
        assert!(
            cache.reported && !cache.hit(),
            "no cachedContentTokenCount: a miss"
        );
    }
}
