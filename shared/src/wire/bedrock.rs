//! AWS Bedrock's Converse API (`POST /model/{modelId}/converse` and `/converse-stream`): the
//! request fields the mock reads, the response and the stream's event payloads (framed by
//! [`crate::eventstream`]), and the error types.

use serde::{Deserialize, Serialize};

/// What the mock reads of a Converse request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConverseRequest {
    #[serde(default)]
    pub messages: Option<Vec<Message>>,
    #[serde(default)]
    pub system: Option<Vec<ContentBlock>>,
    #[serde(default)]
    pub inference_config: Option<InferenceConfig>,
}

#[derive(Debug, Deserialize)]
pub struct Message {
    #[serde(default)]
    pub content: Vec<ContentBlock>,
}

/// A content block; only its text is read.
#[derive(Debug, Deserialize)]
pub struct ContentBlock {
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InferenceConfig {
    #[serde(default)]
    pub max_tokens: Option<u64>,
}

impl ConverseRequest {
    /// An estimate of input tokens: four bytes of text a token (the chat routes' rule).
    pub fn input_tokens(&self) -> u64 {
        let text = |blocks: &[ContentBlock]| -> u64 {
            blocks
                .iter()
                .filter_map(|b| b.text.as_ref())
                .map(|t| t.len() as u64)
                .sum()
        };
        let messages: u64 = self
            .messages
            .iter()
            .flatten()
            .map(|m| text(&m.content))
            .sum();
        let system = self.system.as_deref().map_or(0, text);
        (messages + system).div_ceil(4)
    }

    /// `inferenceConfig.maxTokens`.
    pub fn max_tokens(&self) -> Option<u64> {
        self.inference_config.as_ref()?.max_tokens
    }
}

/// `stopReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn = 0,
    MaxTokens = 1,
    /// The content filter (a guardrail) ended the answer.
    ContentFiltered = 2,
}

impl StopReason {
    pub const ALL: [StopReason; 3] = [
        StopReason::EndTurn,
        StopReason::MaxTokens,
        StopReason::ContentFiltered,
    ];
}

/// A whole Converse response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConverseResponse<'a> {
    pub output: Output<'a>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub metrics: Metrics,
}

#[derive(Debug, Clone, Serialize)]
pub struct Output<'a> {
    pub message: OutputMessage<'a>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OutputMessage<'a> {
    pub role: &'a str,
    pub content: [TextBlock<'a>; 1],
}

#[derive(Debug, Clone, Serialize)]
pub struct TextBlock<'a> {
    pub text: &'a str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub latency_ms: u64,
}

/// `messageStart`.
#[derive(Debug, Clone, Serialize)]
pub struct MessageStart<'a> {
    pub role: &'a str,
}

/// `contentBlockDelta` with text.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockDelta<'a> {
    pub content_block_index: u32,
    pub delta: TextBlock<'a>,
}

/// `contentBlockStop`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockStop {
    pub content_block_index: u32,
}

/// `messageStop`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageStop {
    pub stop_reason: StopReason,
}

/// `metadata`: the stream's last event.
#[derive(Debug, Clone, Serialize)]
pub struct StreamMetadata {
    pub usage: Usage,
    pub metrics: Metrics,
}

/// The error type of an HTTP status, as Bedrock names it in `x-amzn-ErrorType` (and the SDKs
/// read it from there).
pub fn error_type(status: u16) -> &'static str {
    match status {
        400 | 413 => "ValidationException",
        401 | 403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        529 => "ModelNotReadyException",
        500..=599 => "InternalServerException",
        _ => "ValidationException",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_and_its_input_estimated() {
        let r: ConverseRequest = serde_json::from_slice(
            br#"{"messages":[{"role":"user","content":[{"text":"Say hello."},{"image":{}}]}],
                "system":[{"text":"Be brief."}],"inferenceConfig":{"maxTokens":20,"temperature":0.5}}"#,
        )
        .unwrap();
        assert_eq!(r.input_tokens(), (10 + 9_u64).div_ceil(4));
        assert_eq!(r.max_tokens(), Some(20));
        assert_eq!(error_type(429), "ThrottlingException");
    }
}
