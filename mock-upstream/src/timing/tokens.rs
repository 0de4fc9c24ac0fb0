//! Prompt tokens counted with a real BPE (`--tokenizer cl100k|o200k`), in place of the
//! 4-bytes-a-token estimate each API's request type makes: the request's text (every string
//! under its messages, parts and blocks), encoded with OpenAI's ranks, plus the framing the
//! estimate adds (chat: three tokens a message and three to prime the reply). Opt-in: the body
//! is parsed a second time and its text encoded, tens of microseconds a request.

use serde_json::Value;
use tiktoken_rs::CoreBPE;

use crate::config::{Api, Tokenizer};

/// A BPE to count prompt tokens with.
pub struct Counter(CoreBPE);

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counter")
    }
}

impl Counter {
    /// The counter of `tokenizer`; `None` for the estimate. Loading the ranks takes a few
    /// hundred milliseconds, once, at start-up.
    pub fn new(tokenizer: Tokenizer) -> Option<Counter> {
        let bpe = match tokenizer {
            Tokenizer::Estimate => return None,
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base(),
            Tokenizer::O200k => tiktoken_rs::o200k_base(),
        };
        // Invariant: the ranks are compiled into the binary and always load.
        Some(Counter(bpe.expect("embedded BPE ranks load")))
    }

    /// The tokens of one piece of text (the prompt cache counts its parts with this).
    pub fn text_tokens(&self, text: &str) -> u64 {
        self.0.encode_ordinary(text).len() as u64
    }

    /// The prompt tokens of a request to `api` (a body that parsed as the API's request).
    pub fn prompt_tokens(&self, api: Api, body: &[u8]) -> u64 {
        let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else {
            return 0;
        };
        let keys: &[&str] = match api {
            Api::Chat => &["messages"],
            Api::Completions => &["prompt"],
            Api::Responses => &["input", "instructions"],
            Api::Messages | Api::Bedrock => &["messages", "system"],
            Api::Embeddings => &["input"],
            Api::Gemini => &["contents", "systemInstruction", "system_instruction"],
        };
        let mut text = Text::default();
        for key in keys {
            if let Some(value) = request.get(*key) {
                text.gather(value);
            }
        }
        let encoded: usize = text
            .strings
            .iter()
            .map(|s| self.0.encode_ordinary(s).len())
            .sum();
        encoded as u64 + text.ids + framing(api, &request)
    }
}

/// The framing tokens the estimate adds beyond the text.
fn framing(api: Api, request: &serde_json::Map<String, Value>) -> u64 {
    let items = |key: &str| request.get(key).and_then(Value::as_array).map(Vec::len);
    match api {
        Api::Chat => 3 * items("messages").unwrap_or(0) as u64 + 3,
        Api::Responses => match items("input") {
            Some(n) => 3 * n as u64 + 3,
            None => 6,
        },
        _ => 0,
    }
}

/// The text of a request: its strings, and token ids given as numbers (embeddings).
#[derive(Debug, Default)]
struct Text<'a> {
    strings: Vec<&'a str>,
    ids: u64,
}

impl<'a> Text<'a> {
    /// Every string of `value` that is text: itself, the items of an array, and an object's
    /// `text`, `content` and `parts` (chat parts, Responses items, Anthropic, Gemini and
    /// Bedrock blocks); `role`, `type` and the like are not text.
    fn gather(&mut self, value: &'a Value) {
        match value {
            Value::String(s) => self.strings.push(s),
            Value::Number(_) => self.ids += 1,
            Value::Array(items) => items.iter().for_each(|v| self.gather(v)),
            Value::Object(object) => {
                for key in ["text", "content", "parts"] {
                    if let Some(v) = object.get(key) {
                        self.gather(v);
                    }
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bpe_counts_the_text_of_each_api_and_its_framing() {
        let counter = Counter::new(Tokenizer::O200k).unwrap();
        let hello = |api, body: &str| counter.prompt_tokens(api, body.as_bytes());
        // "Say hello." is 3 tokens in o200k_base ("Say", " hello", "."), plus chat's framing.
        assert_eq!(
            hello(
                Api::Chat,
                r#"{"messages":[{"role":"user","content":"Say hello."}]}"#
            ),
            3 + 3 + 3
        );
        assert_eq!(
            hello(
                Api::Chat,
                r#"{"messages":[{"role":"user","content":[{"type":"text","text":"Say hello."}]}]}"#
            ),
            3 + 3 + 3
        );
        assert_eq!(
            hello(
                Api::Messages,
                r#"{"system":"Say hello.","messages":[{"role":"user","content":"Say hello."}]}"#
            ),
            6
        );
        assert_eq!(
            hello(
                Api::Gemini,
                r#"{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}]}"#
            ),
            3
        );
        assert_eq!(hello(Api::Embeddings, r#"{"input":[[1,2,3],[4]]}"#), 4);
        assert!(Counter::new(Tokenizer::Estimate).is_none());
    }
}
