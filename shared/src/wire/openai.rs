//! OpenAI chat completions: the request fields that matter and the response shapes.
//!
//! The response types serialise exactly as the API does (field order included), so the mock can
//! pre-encode them once and tests can compare bytes against them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The fields of a chat request the mock reads; everything else is skipped without allocation.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChatRequest<'a> {
    /// Echoed into the response. Borrowed from the request body when it has no escapes.
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub model: Option<Cow<'a, str>>,
    /// Counted to estimate prompt tokens.
    #[serde(default)]
    pub messages: Option<MessagesScan>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub max_completion_tokens: Option<u64>,
    /// Choices asked for; the mock answers one.
    #[serde(default)]
    pub n: Option<u64>,
}

impl ChatRequest<'_> {
    /// `max_completion_tokens` wins over the deprecated `max_tokens`, as in the API.
    pub fn max_output_tokens(&self) -> Option<u64> {
        self.max_completion_tokens.or(self.max_tokens)
    }

    /// True when the final usage chunk was asked for.
    pub fn include_usage(&self) -> bool {
        self.stream_options
            .as_ref()
            .and_then(|o| o.include_usage)
            .unwrap_or(false)
    }
}

/// serde borrows a `Cow<str>` only when it is the field itself, not inside an `Option`.
pub(crate) fn borrowed_str<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'de, str>>, D::Error> {
    #[derive(Deserialize)]
    struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);
    Ok(Option::<Borrowed>::deserialize(d)?.map(|b| b.0))
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StreamOptions {
    #[serde(default)]
    pub include_usage: Option<bool>,
}

/// The size of a `messages` array, read without building it: message count and text bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MessagesScan {
    pub count: u32,
    pub text_bytes: u64,
}

impl MessagesScan {
    /// An estimate of prompt tokens: four bytes of text a token, three tokens of framing per
    /// message and three to prime the reply (OpenAI's published rule of thumb). The mock has no
    /// tokenizer; the estimate is deterministic, which is what a benchmark needs.
    pub fn prompt_tokens(&self) -> u64 {
        self.text_bytes.div_ceil(4) + 3 * u64::from(self.count) + 3
    }
}

impl<'de> Deserialize<'de> for MessagesScan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SeqVisitor;
        impl<'de> Visitor<'de> for SeqVisitor {
            type Value = MessagesScan;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of messages")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MessagesScan, A::Error> {
                let mut scan = MessagesScan::default();
                while let Some(message) = seq.next_element::<MessageScan>()? {
                    scan.count += 1;
                    scan.text_bytes += message.0;
                }
                Ok(scan)
            }
        }
        deserializer.deserialize_seq(SeqVisitor)
    }
}

/// One message's text bytes.
struct MessageScan(u64);

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum MessageField {
    Content,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for MessageScan {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = MessageScan;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MessageScan, A::Error> {
                let mut bytes = 0;
                while let Some(field) = map.next_key::<MessageField>()? {
                    match field {
                        MessageField::Content => {
                            let raw: &'de RawValue = map.next_value()?;
                            bytes += content_bytes(raw.get()).map_err(de::Error::custom)?;
                        }
                        MessageField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(MessageScan(bytes))
            }
        }
        deserializer.deserialize_map(MapVisitor)
    }
}

/// Text bytes of a message's `content`: a string (escapes counted as written), or an array of
/// parts whose `text` fields count; anything else counts nothing.
pub(crate) fn content_bytes(raw: &str) -> Result<u64, serde_json::Error> {
    if raw.starts_with('"') {
        return Ok(raw.len().saturating_sub(2) as u64);
    }
    if raw.starts_with('[') {
        #[derive(Deserialize)]
        struct Part<'a> {
            #[serde(borrow, default)]
            text: Option<&'a RawValue>,
        }
        let parts: Vec<Part> = serde_json::from_str(raw)?;
        return Ok(parts
            .iter()
            .filter_map(|p| p.text)
            .map(|t| t.get().len().saturating_sub(2) as u64)
            .sum());
    }
    Ok(0)
}

/// `finish_reason` of a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishReason {
    /// The model ended its answer.
    Stop,
    /// `max_tokens` cut it short.
    Length,
    /// The provider's content filter withheld the rest.
    #[serde(rename = "content_filter")]
    ContentFilter,
}

impl FinishReason {
    /// Every reason, in the order of their discriminants (the catalog's template arrays).
    pub const ALL: [FinishReason; 3] = [
        FinishReason::Stop,
        FinishReason::Length,
        FinishReason::ContentFilter,
    ];
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// A whole non-streaming response (`"object":"chat.completion"`).
#[derive(Debug, Clone, Serialize)]
pub struct ChatCompletion<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub choices: [Choice<'a>; 1],
    pub usage: Usage,
    pub system_fingerprint: &'a str,
    /// Azure OpenAI's verdict on the prompt (absent on OpenAI's own API).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_filter_results: Option<[PromptFilterResults; 1]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Choice<'a> {
    pub index: u32,
    pub message: Message<'a>,
    pub logprobs: Option<()>,
    pub finish_reason: FinishReason,
    /// Azure OpenAI's verdict on the output (absent on OpenAI's own API).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_filter_results: Option<FilterResults>,
}

/// Azure OpenAI's content filter verdict, per category.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FilterResults {
    pub hate: Verdict,
    pub self_harm: Verdict,
    pub sexual: Verdict,
    pub violence: Verdict,
}

impl FilterResults {
    /// Every category safe; or, when `filtered`, violence found high and filtered.
    pub fn new(filtered: bool) -> FilterResults {
        let safe = Verdict {
            filtered: false,
            severity: "safe",
        };
        FilterResults {
            hate: safe,
            self_harm: safe,
            sexual: safe,
            violence: if filtered {
                Verdict {
                    filtered: true,
                    severity: "high",
                }
            } else {
                safe
            },
        }
    }
}

/// One category's verdict.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Verdict {
    pub filtered: bool,
    pub severity: &'static str,
}

/// Azure OpenAI's verdict on prompt `prompt_index`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PromptFilterResults {
    pub prompt_index: u32,
    pub content_filter_results: FilterResults,
}

#[derive(Debug, Clone, Serialize)]
pub struct Message<'a> {
    pub role: &'static str,
    pub content: &'a str,
    pub refusal: Option<()>,
}

/// One streamed event (`"object":"chat.completion.chunk"`).
#[derive(Debug, Clone, Serialize)]
pub struct ChatChunk<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub system_fingerprint: &'a str,
    pub choices: Vec<ChunkChoice<'a>>,
    /// Absent unless `include_usage`; then `null` on every chunk but the last.
    #[serde(skip_serializing_if = "ChunkUsage::is_absent")]
    pub usage: ChunkUsage,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkUsage {
    Absent,
    Null,
    Usage(Usage),
}

impl ChunkUsage {
    pub fn is_absent(&self) -> bool {
        matches!(self, ChunkUsage::Absent)
    }
}

impl Serialize for ChunkUsage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ChunkUsage::Usage(usage) => usage.serialize(serializer),
            ChunkUsage::Absent | ChunkUsage::Null => serializer.serialize_none(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ChunkChoice<'a> {
    pub index: u32,
    pub delta: Delta<'a>,
    pub logprobs: Option<()>,
    pub finish_reason: Option<FinishReason>,
    /// Azure OpenAI's verdict on this chunk's output (absent on OpenAI's own API).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_filter_results: Option<FilterResults>,
}

/// A chunk's delta: `{"role":"assistant","content":""}` first, then `{"content":"…"}`, and `{}`
/// on the chunk that carries `finish_reason`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
}

/// `GET /v1/models`.
#[derive(Debug, Clone, Serialize)]
pub struct ModelList<'a> {
    pub object: &'static str,
    pub data: Vec<Model<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Model<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub owned_by: &'a str,
}

/// OpenAI's error body: `{"error":{"message","type","param","code"}}`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    pub error: ErrorDetail<'a>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorDetail<'a> {
    pub message: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub param: Option<&'a str>,
    pub code: Option<&'a str>,
}

impl<'a> ErrorBody<'a> {
    /// Encodes an error body.
    pub fn encode(message: &str, kind: &str, param: Option<&str>, code: Option<&str>) -> Vec<u8> {
        let body = ErrorBody {
            error: ErrorDetail {
                message,
                kind,
                param,
                code,
            },
        };
        // Invariant: a struct of strings and options always serialises.
        serde_json::to_vec(&body).expect("error body serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_the_fields_that_matter_and_borrows_the_model() {
        let body = br#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello there"}],
            "stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"temperature":0.2,
            "tools":[{"type":"function","function":{"name":"f","parameters":{}}}]}"#;
        let req: ChatRequest = serde_json::from_slice(body).unwrap();
        assert!(matches!(req.model, Some(Cow::Borrowed("gpt-4o-mini"))));
        assert_eq!(req.stream, Some(true));
        assert!(req.include_usage());
        assert_eq!(req.max_output_tokens(), Some(5));
        let scan = req.messages.unwrap();
        assert_eq!(scan.count, 1);
        assert_eq!(scan.text_bytes, 11);
        assert_eq!(scan.prompt_tokens(), 3 + 3 + 3);
    }

    #[test]
    fn max_completion_tokens_wins_and_content_parts_count() {
        let body = br#"{"model":"m","max_tokens":9,"max_completion_tokens":3,"messages":[
            {"role":"system","content":"abcd"},
            {"role":"user","content":[{"type":"text","text":"efgh"},{"type":"image_url","image_url":{"url":"x"}}]},
            {"role":"assistant","content":null}]}"#;
        let req: ChatRequest = serde_json::from_slice(body).unwrap();
        assert_eq!(req.max_output_tokens(), Some(3));
        assert!(!req.include_usage());
        let scan = req.messages.unwrap();
        assert_eq!((scan.count, scan.text_bytes), (3, 8));
    }

    #[test]
    fn refuses_what_is_not_a_request() {
        assert!(serde_json::from_slice::<ChatRequest>(b"[1,2]").is_err());
        assert!(serde_json::from_slice::<ChatRequest>(b"{\"model\":").is_err());
        assert!(serde_json::from_slice::<ChatRequest>(br#"{"messages":"hi"}"#).is_err());
        assert!(serde_json::from_slice::<ChatRequest>(br#"{"stream":"yes"}"#).is_err());
    }

    #[test]
    fn chunk_usage_is_absent_null_or_present() {
        let mut chunk = ChatChunk {
            id: "c",
            object: "chat.completion.chunk",
            created: 1,
            model: "m",
            system_fingerprint: "fp",
            choices: vec![],
            usage: ChunkUsage::Absent,
        };
        let text = |c: &ChatChunk| serde_json::to_string(c).unwrap();
        assert!(!text(&chunk).contains("usage"));
        chunk.usage = ChunkUsage::Null;
        assert!(text(&chunk).ends_with(r#""choices":[],"usage":null}"#));
        chunk.usage = ChunkUsage::Usage(Usage {
            prompt_tokens: 1,
            completion_tokens: 2,
            total_tokens: 3,
        });
        assert!(text(&chunk)
            .ends_with(r#""usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#));
    }

    #[test]
    fn error_body_has_openai_shape() {
        let body = ErrorBody::encode("bad", "invalid_request_error", None, Some("x"));
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":"x"}}"#
        );
    }
}
