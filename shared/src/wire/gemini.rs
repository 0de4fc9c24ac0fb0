//! Google's Gemini API (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`): the request fields the mock reads, and the response it
//! answers with, whole or as a stream of partial responses.

use serde::{Deserialize, Serialize};

/// What the mock reads of a `generateContent` request. The API takes camelCase and
/// snake_case keys alike; so does this.
#[derive(Debug, Deserialize)]
pub struct GenerateContentRequest {
    #[serde(default)]
    pub contents: Option<Vec<Content>>,
    #[serde(default, alias = "systemInstruction")]
    pub system_instruction: Option<Content>,
    #[serde(default, alias = "generationConfig")]
    pub generation_config: Option<GenerationConfig>,
}

/// One turn: its parts' text is what the token estimate counts.
#[derive(Debug, Default, Deserialize)]
pub struct Content {
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// A part; only its text is read (images and function parts count for nothing).
#[derive(Debug, Default, Deserialize)]
pub struct Part {
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct GenerationConfig {
    #[serde(default, alias = "maxOutputTokens")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, alias = "candidateCount")]
    pub candidate_count: Option<u64>,
}

impl Content {
    fn text_bytes(&self) -> u64 {
        self.parts
            .iter()
            .filter_map(|p| p.text.as_ref())
            .map(|t| t.len() as u64)
            .sum()
    }
}

impl GenerateContentRequest {
    /// An estimate of prompt tokens: four bytes of text a token (the chat routes' rule).
    pub fn prompt_tokens(&self) -> u64 {
        let contents: u64 = self
            .contents
            .iter()
            .flatten()
            .map(Content::text_bytes)
            .sum();
        let system = self
            .system_instruction
            .as_ref()
            .map_or(0, Content::text_bytes);
        (contents + system).div_ceil(4)
    }

    /// `generationConfig.maxOutputTokens`.
    pub fn max_output_tokens(&self) -> Option<u64> {
        self.generation_config.as_ref()?.max_output_tokens
    }
}

/// `candidates[].finishReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FinishReason {
    Stop = 0,
    MaxTokens = 1,
    /// The safety filter withheld the rest (the content filter's ending).
    Safety = 2,
}

impl FinishReason {
    pub const ALL: [FinishReason; 3] = [
        FinishReason::Stop,
        FinishReason::MaxTokens,
        FinishReason::Safety,
    ];
}

/// A whole response, or one event of a stream.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentResponse<'a> {
    pub candidates: [Candidate<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    pub model_version: &'a str,
    pub response_id: &'a str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate<'a> {
    pub content: ModelContent<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    pub index: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelContent<'a> {
    pub parts: [TextPart<'a>; 1],
    pub role: &'a str,
}

#[derive(Debug, Clone, Serialize)]
pub struct TextPart<'a> {
    pub text: &'a str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    pub prompt_token_count: u64,
    pub candidates_token_count: u64,
    pub total_token_count: u64,
}

/// Google's error body: `{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    pub error: ErrorDetail<'a>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorDetail<'a> {
    pub code: u16,
    pub message: &'a str,
    pub status: &'a str,
}

impl ErrorBody<'_> {
    /// The body for an HTTP status, with Google's canonical status name for it.
    pub fn encode(code: u16, message: &str) -> Vec<u8> {
        let body = ErrorBody {
            error: ErrorDetail {
                code,
                message,
                status: status_name(code),
            },
        };
        // Invariant: a struct of strings and a number always serialises.
        serde_json::to_vec(&body).expect("error body serialises")
    }
}

/// Google's canonical status name of an HTTP status.
pub fn status_name(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        408 | 504 => "DEADLINE_EXCEEDED",
        409 => "ABORTED",
        413 => "INVALID_ARGUMENT",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "UNIMPLEMENTED",
        503 => "UNAVAILABLE",
        500..=599 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_and_snake_case_requests_are_read_alike() {
        let camel: GenerateContentRequest = serde_json::from_slice(
            br#"{"contents":[{"role":"user","parts":[{"text":"Say hello."}]}],
                "systemInstruction":{"parts":[{"text":"Be brief."}]},
                "generationConfig":{"maxOutputTokens":20,"temperature":0.5}}"#,
        )
        .unwrap();
        assert_eq!(camel.prompt_tokens(), (10 + 9_u64).div_ceil(4));
        assert_eq!(camel.max_output_tokens(), Some(20));
        let snake: GenerateContentRequest = serde_json::from_slice(
            br#"{"contents":[{"parts":[{"text":"Say hello."},{"inline_data":{}}]}],
                "generation_config":{"max_output_tokens":7}}"#,
        )
        .unwrap();
        assert_eq!(snake.prompt_tokens(), 3);
        assert_eq!(snake.max_output_tokens(), Some(7));
        assert_eq!(
            String::from_utf8(ErrorBody::encode(429, "Quota")).unwrap(),
            r#"{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}"#
        );
    }
}
