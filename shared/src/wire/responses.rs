//! OpenAI's Responses API (`POST /v1/responses`): the request fields the mock reads, and the
//! response object and stream events it answers with.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::openai::{borrowed_str, content_bytes, MessagesScan};

/// What the mock reads of a responses request; other fields are skipped without being built.
#[derive(Debug, Deserialize)]
pub struct ResponsesRequest<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub model: Option<Cow<'a, str>>,
    /// A string, or an array of input items (messages).
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub instructions: Option<&'a RawValue>,
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    #[serde(default)]
    pub stream: Option<bool>,
}

impl ResponsesRequest<'_> {
    /// Estimated input tokens: the chat route's estimate for input items (a plain string counts
    /// as one message), plus the instructions at 4 bytes a token.
    pub fn input_tokens(&self) -> Result<u64, serde_json::Error> {
        let input = match self.input.map(RawValue::get) {
            None => 0,
            Some(raw) if raw.starts_with('[') => {
                serde_json::from_str::<MessagesScan>(raw)?.prompt_tokens()
            }
            Some(raw) => content_bytes(raw)?.div_ceil(4) + 3 + 3,
        };
        let instructions = self
            .instructions
            .map(|raw| content_bytes(raw.get()))
            .transpose()?
            .unwrap_or(0);
        Ok(input + instructions.div_ceil(4))
    }
}

/// `completed`, or `incomplete` when `max_output_tokens` cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    InProgress,
    Completed,
    Incomplete,
}

#[derive(Debug, Clone, Serialize)]
pub struct IncompleteDetails<'a> {
    pub reason: &'a str,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputText<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub text: &'a str,
    pub annotations: [(); 0],
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputMessage<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub id: &'a str,
    pub status: Status,
    pub role: &'a str,
    pub content: Vec<OutputText<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TokensDetails {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub input_tokens_details: TokensDetails,
    pub output_tokens: u64,
    pub output_tokens_details: TokensDetails,
    pub total_tokens: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TextFormat<'a> {
    pub format: Kind<'a>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Kind<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Reasoning {
    pub effort: Option<()>,
    pub summary: Option<()>,
}

/// The response object, whole or as the streams' `response.*` events carry it.
#[derive(Debug, Clone, Serialize)]
pub struct Response<'a> {
    pub id: &'a str,
    pub object: &'a str,
    pub created_at: u64,
    pub status: Status,
    pub error: Option<()>,
    pub incomplete_details: Option<IncompleteDetails<'a>>,
    pub instructions: Option<()>,
    pub max_output_tokens: Option<()>,
    pub model: &'a str,
    pub output: Vec<OutputMessage<'a>>,
    pub parallel_tool_calls: bool,
    pub previous_response_id: Option<()>,
    pub reasoning: Reasoning,
    pub store: bool,
    pub temperature: f64,
    pub text: TextFormat<'a>,
    pub tool_choice: &'a str,
    pub tools: [(); 0],
    pub top_p: f64,
    pub truncation: &'a str,
    pub usage: Option<Usage>,
    pub user: Option<()>,
    pub metadata: Empty,
}

/// `{}`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Empty {}

/// `response.created`, `response.in_progress`, `response.completed`, `response.incomplete`.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseEvent<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub response: Response<'a>,
    pub sequence_number: u64,
}

/// `response.output_item.added` / `.done`.
#[derive(Debug, Clone, Serialize)]
pub struct ItemEvent<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub output_index: u32,
    pub item: OutputMessage<'a>,
    pub sequence_number: u64,
}

/// `response.content_part.added` / `.done`.
#[derive(Debug, Clone, Serialize)]
pub struct PartEvent<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub item_id: &'a str,
    pub output_index: u32,
    pub content_index: u32,
    pub part: OutputText<'a>,
    pub sequence_number: u64,
}

/// `response.output_text.delta`.
#[derive(Debug, Clone, Serialize)]
pub struct TextDelta<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub item_id: &'a str,
    pub output_index: u32,
    pub content_index: u32,
    pub delta: &'a str,
    pub sequence_number: u64,
}

/// `response.output_text.done`.
#[derive(Debug, Clone, Serialize)]
pub struct TextDone<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub item_id: &'a str,
    pub output_index: u32,
    pub content_index: u32,
    pub text: &'a str,
    pub sequence_number: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_and_item_inputs_are_estimated() {
        let r: ResponsesRequest = serde_json::from_slice(
            br#"{"model":"gpt-4o","input":"Say hello.","max_output_tokens":20}"#,
        )
        .unwrap();
        assert_eq!(r.input_tokens().unwrap(), 3 + 3 + 3);
        assert_eq!(r.max_output_tokens, Some(20));
        let r: ResponsesRequest = serde_json::from_slice(
            br#"{"model":"gpt-4o","instructions":"Be brief.","stream":true,
                "input":[{"role":"user","content":[{"type":"input_text","text":"Say hello."}]}]}"#,
        )
        .unwrap();
        assert_eq!(r.input_tokens().unwrap(), 3 + 3 + 3 + 3);
        assert_eq!(r.stream, Some(true));
    }
}
