//! OpenAI's legacy completions (`POST /v1/completions`): the request fields the mock reads, and
//! the text completion and chunks it answers with.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::openai::{borrowed_str, content_bytes, ChunkUsage, FinishReason, StreamOptions, Usage};

#[derive(Debug, Deserialize)]
pub struct CompletionRequest<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub model: Option<Cow<'a, str>>,
    /// A string, an array of strings, or token ids.
    #[serde(borrow, default)]
    pub prompt: Option<&'a RawValue>,
    /// The API's default is 16.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
}

impl CompletionRequest<'_> {
    /// Estimated prompt tokens: 4 bytes of prompt text a token (string parts of an array
    /// count), or one per token id.
    pub fn prompt_tokens(&self) -> u64 {
        let Some(raw) = self.prompt.map(RawValue::get) else {
            return 0;
        };
        if raw.starts_with('"') {
            return content_bytes(raw).unwrap_or(0).div_ceil(4);
        }
        let items: Vec<&RawValue> = serde_json::from_str(raw).unwrap_or_default();
        items
            .iter()
            .map(|i| {
                let t = i.get();
                if t.starts_with('"') {
                    (t.len().saturating_sub(2) as u64).div_ceil(4)
                } else {
                    1
                }
            })
            .sum()
    }

    pub fn include_usage(&self) -> bool {
        self.stream_options
            .as_ref()
            .and_then(|o| o.include_usage)
            .unwrap_or(false)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TextChoice<'a> {
    pub text: &'a str,
    pub index: u32,
    pub logprobs: Option<()>,
    pub finish_reason: Option<FinishReason>,
}

/// A whole text completion.
#[derive(Debug, Clone, Serialize)]
pub struct TextCompletion<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub choices: [TextChoice<'a>; 1],
    pub usage: Usage,
    pub system_fingerprint: &'a str,
}

/// One streamed chunk (object `text_completion`, as the API names chunks too).
#[derive(Debug, Clone, Serialize)]
pub struct TextChunk<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub choices: Vec<TextChoice<'a>>,
    pub model: &'a str,
    pub system_fingerprint: &'a str,
    #[serde(skip_serializing_if = "ChunkUsage::is_absent")]
    pub usage: ChunkUsage,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_of_every_form_are_estimated() {
        let r: CompletionRequest =
            serde_json::from_slice(br#"{"model":"m","prompt":"Say hello, please."}"#).unwrap();
        assert_eq!(r.prompt_tokens(), 5);
        let r: CompletionRequest =
            serde_json::from_slice(br#"{"model":"m","prompt":["abcd","efgh"]}"#).unwrap();
        assert_eq!(r.prompt_tokens(), 2);
        let r: CompletionRequest =
            serde_json::from_slice(br#"{"model":"m","prompt":[1,2,3]}"#).unwrap();
        assert_eq!(r.prompt_tokens(), 3);
    }
}
