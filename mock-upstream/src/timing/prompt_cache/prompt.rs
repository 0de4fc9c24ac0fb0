//! A request's prompt as the cache sees it: its parts in the provider's prefix order (tools,
//! system, messages), each as canonical text (its JSON with sorted keys and no whitespace, the
//! cache markers left out, so a gateway's re-serialisation hashes the same), its token count,
//! and the cache breakpoint that ends it, if any (Anthropic's `cache_control`, Bedrock's
//! `cachePoint`).

use serde_json::Value;

use crate::config::Api;
use crate::timing::tokens::Counter;

/// How long an explicit breakpoint's entry lives unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    FiveMinutes,
    OneHour,
}

/// One part of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub text: Vec<u8>,
    pub tokens: u64,
    /// A breakpoint after this part.
    pub mark: Option<Ttl>,
}

/// The parts of a request to `api`, in prefix order; empty for a body that is not an object.
pub fn parts(api: Api, body: &[u8], counter: Option<&Counter>) -> Vec<Part> {
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let mut out = Parts {
        parts: Vec::new(),
        counter,
        framing: matches!(api, Api::Chat | Api::Responses),
    };
    let get = |key: &str| request.get(key);
    match api {
        Api::Chat => {
            out.each(get("tools"));
            out.each(get("messages"));
        }
        Api::Responses => {
            out.each(get("tools"));
            out.one(get("instructions"));
            match get("input") {
                Some(Value::Array(_)) => out.each(get("input")),
                input => out.one(input),
            }
        }
        Api::Messages => {
            out.each(get("tools"));
            match get("system") {
                Some(Value::Array(_)) => out.each(get("system")),
                Some(Value::String(text)) => out.one(Some(&text_block(text))),
                system => out.one(system),
            }
            out.messages(get("messages"), "content");
        }
        Api::Gemini => {
            out.each(get("tools"));
            out.one(get("systemInstruction").or(get("system_instruction")));
            out.each(get("contents"));
        }
        Api::Bedrock => {
            let tools = get("toolConfig").and_then(|c| c.get("tools"));
            out.each(tools);
            out.each(get("system"));
            out.messages(get("messages"), "content");
        }
        Api::Completions | Api::Embeddings => {}
    }
    out.parts
}

struct Parts<'c> {
    parts: Vec<Part>,
    counter: Option<&'c Counter>,
    /// Three tokens of framing a message, as chat's and the Responses API's counts have.
    framing: bool,
}

impl Parts<'_> {
    /// Each element of an array as a part (a breakpoint mark as an element marks the part
    /// before it: Bedrock's `cachePoint`).
    fn each(&mut self, value: Option<&Value>) {
        let Some(Value::Array(items)) = value else {
            return self.one(value);
        };
        for item in items {
            self.push(item, String::new());
        }
    }

    fn one(&mut self, value: Option<&Value>) {
        if let Some(value) = value.filter(|v| !v.is_null()) {
            self.push(value, String::new());
        }
    }

    /// Messages whose content blocks are parts of their own (Anthropic's and Bedrock's, where
    /// a breakpoint may end any block), each block's text led by its message's role.
    fn messages(&mut self, value: Option<&Value>, content: &str) {
        let Some(Value::Array(messages)) = value else {
            return;
        };
        for message in messages {
            let role = message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            match message.get(content) {
                Some(Value::Array(blocks)) => {
                    for block in blocks {
                        self.push(block, role.clone());
                    }
                }
                // A string is one text block (Anthropic's equivalence), so a client that
                // writes one form one turn and the other the next still hits.
                Some(Value::String(text)) => self.push(&text_block(text), role),
                Some(other) => self.push(other, role),
                None => {}
            }
        }
    }

    fn push(&mut self, value: &Value, role: String) {
        if let Some(ttl) = cache_point(value) {
            if let Some(last) = self.parts.last_mut() {
                last.mark = Some(ttl);
            }
            return;
        }
        let mark = value.get("cache_control").map(ttl_of);
        let mut canonical = value.clone();
        strip_marks(&mut canonical);
        let mut text = role.into_bytes();
        text.push(0);
        // Invariant: a JSON value always serialises.
        text.extend(serde_json::to_vec(&canonical).expect("value serialises"));
        let tokens = self.tokens(value) + if self.framing { 3 } else { 0 };
        self.parts.push(Part { text, tokens, mark });
    }

    /// The tokens of a value's strings: the estimate's 4 bytes a token, or the BPE's count.
    fn tokens(&self, value: &Value) -> u64 {
        let mut strings = Vec::new();
        gather(value, &mut strings);
        match self.counter {
            Some(counter) => strings.iter().map(|s| counter.text_tokens(s)).sum(),
            None => strings
                .iter()
                .map(|s| s.len() as u64)
                .sum::<u64>()
                .div_ceil(4),
        }
    }
}

/// A string content as the text block it stands for.
fn text_block(text: &str) -> Value {
    serde_json::json!({"type": "text", "text": text})
}

/// Bedrock's `{"cachePoint":{"type":"default"}}` block, which marks the part before it.
fn cache_point(value: &Value) -> Option<Ttl> {
    let point = value.get("cachePoint")?;
    Some(match point.get("ttl").and_then(Value::as_str) {
        Some("1h") => Ttl::OneHour,
        _ => Ttl::FiveMinutes,
    })
}

/// Anthropic's `cache_control`: `{"type":"ephemeral"}` (5 minutes) or with `"ttl":"1h"`.
fn ttl_of(control: &Value) -> Ttl {
    match control.get("ttl").and_then(Value::as_str) {
        Some("1h") => Ttl::OneHour,
        _ => Ttl::FiveMinutes,
    }
}

fn strip_marks(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(strip_marks);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_marks),
        _ => {}
    }
}

/// Every string under `value` but object keys and the `type`/`role` tags.
fn gather<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| gather(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                if !matches!(key.as_str(), "type" | "role" | "cache_control") {
                    gather(v, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn re_serialised_bodies_give_the_same_parts_and_markers_do_not_change_the_text() {
        let a = br#"{"model":"m","messages":[{"role":"user","content":"hello there"}]}"#;
        let b =
            br#"{ "messages" : [ { "content" : "hello there", "role" : "user" } ], "model":"m" }"#;
        assert_eq!(parts(Api::Chat, a, None), parts(Api::Chat, b, None));
        assert_eq!(parts(Api::Chat, a, None)[0].tokens, 3 + 3);

        let marked = br#"{"system":[{"type":"text","text":"rules","cache_control":{"type":"ephemeral","ttl":"1h"}}],
            "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
        let plain = br#"{"system":[{"type":"text","text":"rules"}],
            "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
        let (m, p) = (
            parts(Api::Messages, marked, None),
            parts(Api::Messages, plain, None),
        );
        assert_eq!(m[0].mark, Some(Ttl::OneHour));
        assert_eq!(p[0].mark, None);
        assert_eq!(m[0].text, p[0].text);
        assert_eq!(m[1].text, b"user\0{\"text\":\"hi\",\"type\":\"text\"}");

        let strings = br#"{"system":"rules","messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(
            parts(Api::Messages, strings, None),
            p,
            "a string is its one text block"
        );
    }

    #[test]
    fn a_bedrock_cache_point_marks_the_block_before_it() {
        let body = br#"{"system":[{"text":"rules"},{"cachePoint":{"type":"default"}}],
            "messages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
        let p = parts(Api::Bedrock, body, None);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].mark, Some(Ttl::FiveMinutes));
        assert_eq!(p[1].mark, None);
    }
}
