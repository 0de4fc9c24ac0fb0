//! OpenAI's Responses API (`POST /v1/responses`): the request fields the mock reads, and the
//! response object and stream events it answers with.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::openai::{borrowed_str, content_bytes, MessagesScan};

/// What the mock reads of a responses request; other fields are skipped without being built.
/// The parameters a response object echoes are kept as the request wrote them.
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
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    #[serde(borrow, default)]
    pub previous_response_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub reasoning: Option<&'a RawValue>,
    #[serde(default)]
    pub store: Option<bool>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(borrow, default)]
    pub text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub tool_choice: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub tools: Option<&'a RawValue>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(borrow, default)]
    pub truncation: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub user: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub metadata: Option<&'a RawValue>,
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

    /// The parameters the response echoes: as the request gave them, the API's default where
    /// it gave none. `None` when it gave none at all, so the answer can use the pre-encoded
    /// defaults ([`ResponseParams::DEFAULT`]).
    pub fn params(&self) -> Option<ResponseParams<'_>> {
        let asked = self.instructions.is_some()
            || self.max_output_tokens.is_some()
            || self.parallel_tool_calls.is_some()
            || self.previous_response_id.is_some()
            || self.reasoning.is_some()
            || self.store.is_some()
            || self.temperature.is_some()
            || self.text.is_some()
            || self.tool_choice.is_some()
            || self.tools.is_some()
            || self.top_p.is_some()
            || self.truncation.is_some()
            || self.user.is_some()
            || self.metadata.is_some();
        if !asked {
            return None;
        }
        let d = ResponseParams::DEFAULT;
        Some(ResponseParams {
            instructions: self.instructions,
            max_output_tokens: self.max_output_tokens,
            parallel_tool_calls: self.parallel_tool_calls.unwrap_or(d.parallel_tool_calls),
            previous_response_id: self.previous_response_id,
            reasoning: d.reasoning.or_asked(self.reasoning),
            store: self.store.unwrap_or(d.store),
            temperature: self.temperature.unwrap_or(d.temperature),
            text: d.text.or_asked(self.text),
            tool_choice: d.tool_choice.or_asked(self.tool_choice),
            tools: d.tools.or_asked(self.tools),
            top_p: self.top_p.unwrap_or(d.top_p),
            truncation: d.truncation.or_asked(self.truncation),
            user: self.user,
            metadata: d.metadata.or_asked(self.metadata),
        })
    }
}

/// A parameter a response echoes: the request's JSON as written, or the API's default.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(untagged)]
pub enum Echoed<'a, T> {
    Asked(&'a RawValue),
    Default(T),
}

impl<'a, T> Echoed<'a, T> {
    /// The request's value where it gave one, else this.
    fn or_asked(self, asked: Option<&'a RawValue>) -> Echoed<'a, T> {
        asked.map_or(self, Echoed::Asked)
    }
}

/// The request parameters a response object carries back (the keys between `incomplete_details`
/// and `usage` in the API's reference, less `model` and `output`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ResponseParams<'a> {
    pub instructions: Option<&'a RawValue>,
    pub max_output_tokens: Option<u64>,
    pub parallel_tool_calls: bool,
    pub previous_response_id: Option<&'a RawValue>,
    pub reasoning: Echoed<'a, Reasoning>,
    pub store: bool,
    pub temperature: f64,
    pub text: Echoed<'a, TextFormat<'static>>,
    pub tool_choice: Echoed<'a, &'static str>,
    pub tools: Echoed<'a, [(); 0]>,
    pub top_p: f64,
    pub truncation: Echoed<'a, &'static str>,
    pub user: Option<&'a RawValue>,
    pub metadata: Echoed<'a, Empty>,
}

impl ResponseParams<'static> {
    /// What a response says of a request that set none of them. `store` is false: the mock
    /// keeps nothing for `previous_response_id` to find.
    pub const DEFAULT: ResponseParams<'static> = ResponseParams {
        instructions: None,
        max_output_tokens: None,
        parallel_tool_calls: true,
        previous_response_id: None,
        reasoning: Echoed::Default(Reasoning {
            effort: None,
            summary: None,
        }),
        store: false,
        temperature: 1.0,
        text: Echoed::Default(TextFormat {
            format: Kind { kind: "text" },
        }),
        tool_choice: Echoed::Default("auto"),
        tools: Echoed::Default([]),
        top_p: 1.0,
        truncation: Echoed::Default("disabled"),
        user: None,
        metadata: Echoed::Default(Empty {}),
    };
}

/// `completed`, or `incomplete` when `max_output_tokens` cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    InProgress,
    Completed,
    Incomplete,
    Failed,
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
    /// Prompt tokens written to the cache (input details only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
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

#[derive(Debug, Clone, Copy, Serialize)]
pub struct TextFormat<'a> {
    pub format: Kind<'a>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Kind<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Reasoning {
    pub effort: Option<()>,
    pub summary: Option<()>,
}

/// The response object, whole or as the streams' `response.*` events carry it. `P` is the
/// echoed request parameters ([`ResponseParams`], or the catalog's slot for them), serialised
/// in their place among the keys.
#[derive(Debug, Clone, Serialize)]
pub struct Response<'a, P> {
    pub id: &'a str,
    pub object: &'a str,
    pub created_at: u64,
    pub status: Status,
    pub error: Option<ResponseError<'a>>,
    pub incomplete_details: Option<IncompleteDetails<'a>>,
    pub model: &'a str,
    pub output: Vec<OutputMessage<'a>>,
    #[serde(flatten)]
    pub params: P,
    pub usage: Option<Usage>,
}

/// The `error` of a failed response.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseError<'a> {
    pub code: &'a str,
    pub message: &'a str,
}

/// `{}`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Empty {}

/// `response.created`, `response.in_progress`, `response.completed`, `response.incomplete`,
/// `response.failed`.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseEvent<'a, P> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub response: Response<'a, P>,
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
