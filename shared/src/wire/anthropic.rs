//! Anthropic's Messages API (`POST /v1/messages`): the request fields the mock reads, and the
//! message, stream events and error it answers with.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::openai::{borrowed_str, content_bytes, MessagesScan};

/// The API version header every request must carry.
pub const VERSION_HEADER: &str = "anthropic-version";

/// What the mock reads of a messages request; other fields are skipped without being built.
#[derive(Debug, Deserialize)]
pub struct MessagesRequest<'a> {
    /// Echoed into the response. Borrowed from the request body when it has no escapes.
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub messages: Option<MessagesScan>,
    /// A string or an array of text blocks; counted into the prompt.
    #[serde(borrow, default)]
    pub system: Option<&'a RawValue>,
    /// Required by the API.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub stream: Option<bool>,
}

impl MessagesRequest<'_> {
    /// Estimated input tokens: the messages' estimate plus the system prompt's text.
    pub fn input_tokens(&self) -> u64 {
        let system = self
            .system
            .and_then(|raw| content_bytes(raw.get()).ok())
            .unwrap_or(0);
        self.messages
            .as_ref()
            .map_or(0, MessagesScan::prompt_tokens)
            + system.div_ceil(4)
    }
}

/// Why a message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn = 0,
    MaxTokens = 1,
    /// The model declined (Anthropic's answer where OpenAI's content filter acts).
    Refusal = 2,
}

impl StopReason {
    /// Every reason, in the order of their discriminants (the catalog's template arrays).
    pub const ALL: [StopReason; 3] = [
        StopReason::EndTurn,
        StopReason::MaxTokens,
        StopReason::Refusal,
    ];
}

#[derive(Debug, Clone, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TextBlock<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub text: &'a str,
}

/// A whole message (the non-streaming answer, and the skeleton in `message_start`).
#[derive(Debug, Clone, Serialize)]
pub struct Message<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub role: &'a str,
    pub model: &'a str,
    pub content: Vec<TextBlock<'a>>,
    pub stop_reason: Option<StopReason>,
    pub stop_sequence: Option<&'a str>,
    pub usage: Usage,
}

/// `message_start`.
#[derive(Debug, Clone, Serialize)]
pub struct MessageStart<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub message: Message<'a>,
}

/// `content_block_start`.
#[derive(Debug, Clone, Serialize)]
pub struct BlockStart<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub index: u32,
    pub content_block: TextBlock<'a>,
}

/// `content_block_delta` with a `text_delta`.
#[derive(Debug, Clone, Serialize)]
pub struct BlockDelta<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub index: u32,
    pub delta: TextBlock<'a>,
}

/// `content_block_stop`, and the events that carry only a type (`ping`, `message_stop`).
#[derive(Debug, Clone, Serialize)]
pub struct BlockStop<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
}

/// `message_delta`: the stop reason and the cumulative output tokens.
#[derive(Debug, Clone, Serialize)]
pub struct MessageDelta<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub delta: StopDelta<'a>,
    pub usage: OutputUsage,
}

#[derive(Debug, Clone, Serialize)]
pub struct StopDelta<'a> {
    pub stop_reason: StopReason,
    pub stop_sequence: Option<&'a str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputUsage {
    pub output_tokens: u64,
}

/// `{"type":"error","error":{"type","message"}}`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub error: ErrorDetail<'a>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorDetail<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub message: &'a str,
}

impl ErrorBody<'_> {
    /// Encodes an error body of type `kind` (`invalid_request_error`, `not_found_error`, …).
    pub fn encode(kind: &str, message: &str) -> Vec<u8> {
        let body = ErrorBody {
            kind: "error",
            error: ErrorDetail { kind, message },
        };
        // Invariant: a struct of strings always serialises.
        serde_json::to_vec(&body).expect("error body serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_scanned_with_the_system_prompt_counted() {
        let body = br#"{"model":"claude-3-5-haiku-latest","max_tokens":64,"stream":true,
            "system":"Be brief, please.",
            "messages":[{"role":"user","content":[{"type":"text","text":"Say hello."}]}]}"#;
        let r: MessagesRequest = serde_json::from_slice(body).unwrap();
        assert!(matches!(
            r.model,
            Some(Cow::Borrowed("claude-3-5-haiku-latest"))
        ));
        assert_eq!((r.max_tokens, r.stream), (Some(64), Some(true)));
        // "Say hello." is 10 bytes: 3 tokens + 3 per message + 3; the system prompt 17 bytes: 5.
        assert_eq!(r.input_tokens(), 3 + 3 + 3 + 5);
    }

    #[test]
    fn errors_have_anthropics_shape() {
        let body = ErrorBody::encode("overloaded_error", "Overloaded");
        assert_eq!(
            body,
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
        );
    }
}
