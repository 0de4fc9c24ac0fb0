//! Every response body, SSE event and header set, encoded once at start-up.
//!
//! Responses come from the wire types of `gatebench_shared::wire`, serialised with sentinels
//! and cut into [`Template`]s. A request then costs a lookup and `Bytes` clones. OpenAI's chat
//! completions are here; Anthropic's Messages API is in `anthropic`, OpenAI's Responses API in
//! `responses`.

mod anthropic;
mod bedrock;
mod chat;
mod completions;
mod gemini;
mod headers;
pub(crate) mod payload;
mod responses;
pub(crate) mod template;

pub use anthropic::{AnthropicCatalog, MESSAGE_ID, REQUEST_ID as ANTHROPIC_REQUEST_ID};
pub use bedrock::BedrockCatalog;
pub use chat::{ChatTemplates, Dialect};
pub use completions::CompletionsCatalog;
pub use gemini::GeminiCatalog;
pub use headers::{header_map, next_second, put_header, FixedHeaders, HeaderSet, PROCESSING_MS};
pub use responses::{EventText, Outcome, ResponsesCatalog, RESPONSE_ID};

use bytes::Bytes;
use gatebench_shared::wire::openai::{Model, ModelList};
use hyper::header::{HeaderMap, HeaderValue, CACHE_CONTROL};

use crate::catalog::template::{json_escaped, permanent};
use crate::config::Config;

/// `id` of every completion. Constant, so the same request always gets the same bytes.
pub const COMPLETION_ID: &str = "chatcmpl-gatebench0000000000000000000";
/// `created` of every response (2026-01-01T00:00:00Z), constant for the same reason.
pub const CREATED: u64 = 1_767_225_600;
pub const SYSTEM_FINGERPRINT: &str = "fp_gatebench";
/// `x-request-id` of every response.
pub const REQUEST_ID: &str = "req_gatebench0000000000000000000";

/// The output text cycles through these tokens; the first token of a response has no space.
const FIRST_TOKEN: &str = "Hello";
const TOKENS: [&str; 16] = [
    " Hello",
    " from",
    " the",
    " gatebench",
    " mock",
    ",",
    " a",
    " deterministic",
    " provider",
    " whose",
    " bytes",
    " are",
    " the",
    " same",
    " every",
    " run.",
];

/// Largest `openai-processing-ms` value kept pre-encoded; larger ones are formatted.
const PROCESSING_MS_TABLE: u64 = 1_000;

/// Whether stream chunks carry a `usage` key (`include_usage`) or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageKey {
    Absent = 0,
    Null = 1,
}

impl UsageKey {
    /// The key of a stream that asked for its usage (`include_usage`) or not.
    pub fn of(include_usage: bool) -> UsageKey {
        if include_usage {
            UsageKey::Null
        } else {
            UsageKey::Absent
        }
    }
}

/// The pre-encoded responses of one server.
#[derive(Debug)]
pub struct Catalog {
    /// OpenAI's chat completions.
    chat: ChatTemplates,
    /// Azure OpenAI's.
    azure_chat: ChatTemplates,
    done: Bytes,
    first_token: Bytes,
    tokens: Vec<Bytes>,
    content: Bytes,
    content_ends: Vec<usize>,
    max_tokens: u32,
    pub models_body: Bytes,
    pub health_body: Bytes,
    json_headers: HeaderSet,
    sse_headers: HeaderSet,
    azure_json_headers: HeaderSet,
    azure_sse_headers: HeaderSet,
    processing_ms: Vec<HeaderValue>,
    /// Anthropic's Messages API.
    pub anthropic: AnthropicCatalog,
    /// OpenAI's Responses API.
    pub responses: ResponsesCatalog,
    /// OpenAI's legacy completions.
    pub completions: CompletionsCatalog,
    /// Google's Gemini API.
    pub gemini: GeminiCatalog,
    /// AWS Bedrock's Converse API.
    pub bedrock: BedrockCatalog,
}

impl Catalog {
    /// Encodes everything the configuration can ask for.
    pub fn build(config: &Config) -> Catalog {
        let max_tokens = config.latency.tokens.max();
        let escaped = |s: &str| permanent(&json_escaped(s));
        let first_token = escaped(FIRST_TOKEN);
        let tokens: Vec<Bytes> = TOKENS.iter().map(|t| escaped(t)).collect();
        let mut content = Vec::new();
        let mut content_ends = vec![0];
        for k in 0..max_tokens as usize {
            let token = if k == 0 {
                &first_token
            } else {
                &tokens[k % TOKENS.len()]
            };
            content.extend_from_slice(token);
            content_ends.push(content.len());
        }
        Catalog {
            bedrock: BedrockCatalog::build(&first_token, &tokens),
            chat: ChatTemplates::build(Dialect::OpenAi),
            azure_chat: ChatTemplates::build(Dialect::Azure),
            done: Bytes::from_static(b"data: [DONE]\n\n"),
            first_token,
            tokens,
            content: permanent(&content),
            content_ends,
            max_tokens,
            models_body: models_body(&config.models),
            health_body: Bytes::from_static(b"{\"status\":\"ok\"}"),
            json_headers: HeaderSet::new(openai_headers("application/json")),
            sse_headers: {
                let mut h = openai_headers("text/event-stream; charset=utf-8");
                h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                HeaderSet::new(h)
            },
            azure_json_headers: HeaderSet::new(azure_headers("application/json")),
            azure_sse_headers: {
                let mut h = azure_headers("text/event-stream; charset=utf-8");
                h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                HeaderSet::new(h)
            },
            processing_ms: (0..=PROCESSING_MS_TABLE).map(HeaderValue::from).collect(),
            anthropic: AnthropicCatalog::build(),
            responses: ResponsesCatalog::build(),
            completions: CompletionsCatalog::build(),
            gemini: GeminiCatalog::build(),
        }
    }

    /// The chat completion templates of `dialect`.
    #[inline]
    pub fn chat(&self, dialect: Dialect) -> &ChatTemplates {
        match dialect {
            Dialect::OpenAi => &self.chat,
            Dialect::Azure => &self.azure_chat,
        }
    }

    /// `data: [DONE]\n\n`.
    pub fn done(&self) -> &Bytes {
        &self.done
    }

    /// The text of output token `k` (0-based), JSON-escaped.
    pub fn token(&self, k: u32) -> &Bytes {
        if k == 0 {
            &self.first_token
        } else {
            &self.tokens[k as usize % self.tokens.len()]
        }
    }

    /// The text of the first `n` tokens, JSON-escaped: a slice of one shared buffer, or, for
    /// more tokens than any configured draw gives (`x-mock-tokens` above `--tokens`), built for
    /// this answer, so text, deltas and usage agree at any length.
    pub fn content(&self, n: u32) -> Bytes {
        if n <= self.max_tokens {
            return self.content.slice(..self.content_ends[n as usize]);
        }
        self.longer_content(n)
    }

    #[cold]
    fn longer_content(&self, n: u32) -> Bytes {
        let mut text =
            Vec::with_capacity(self.content.len() * (n / self.max_tokens.max(1)) as usize);
        text.extend_from_slice(&self.content);
        for k in self.max_tokens..n {
            text.extend_from_slice(self.token(k));
        }
        Bytes::from(text)
    }

    /// A fixed header set as a map (for hyper).
    pub fn fixed_map(&self, fixed: FixedHeaders) -> HeaderMap {
        match fixed {
            FixedHeaders::OpenAiJson { processing_ms } => self
                .json_headers
                .map(Some(self.processing_ms_value(processing_ms))),
            FixedHeaders::OpenAiSse => self.sse_headers.map(None),
            FixedHeaders::AnthropicJson => self.anthropic.json_headers.map(None),
            FixedHeaders::AnthropicSse => self.anthropic.sse_headers.map(None),
            FixedHeaders::AzureJson => self.azure_json_headers.map(None),
            FixedHeaders::AzureSse => self.azure_sse_headers.map(None),
            FixedHeaders::GeminiJson => self.gemini.json_headers.map(None),
            FixedHeaders::GeminiSse => self.gemini.sse_headers.map(None),
            FixedHeaders::BedrockJson => self.bedrock.json_headers.map(None),
            FixedHeaders::BedrockStream => self.bedrock.stream_headers.map(None),
        }
    }

    /// Appends a fixed header set, encoded (for the own HTTP/1.1 server).
    pub fn put_fixed(&self, fixed: FixedHeaders, out: &mut bytes::BytesMut) {
        match fixed {
            FixedHeaders::OpenAiJson { processing_ms } => {
                self.json_headers.put(out, Some(processing_ms))
            }
            FixedHeaders::OpenAiSse => self.sse_headers.put(out, Some(0)),
            FixedHeaders::AnthropicJson => self.anthropic.json_headers.put(out, None),
            FixedHeaders::AnthropicSse => self.anthropic.sse_headers.put(out, None),
            FixedHeaders::AzureJson => self.azure_json_headers.put(out, None),
            FixedHeaders::AzureSse => self.azure_sse_headers.put(out, None),
            FixedHeaders::GeminiJson => self.gemini.json_headers.put(out, None),
            FixedHeaders::GeminiSse => self.gemini.sse_headers.put(out, None),
            FixedHeaders::BedrockJson => self.bedrock.json_headers.put(out, None),
            FixedHeaders::BedrockStream => self.bedrock.stream_headers.put(out, None),
        }
    }

    fn processing_ms_value(&self, ms: u64) -> HeaderValue {
        match self.processing_ms.get(ms as usize) {
            Some(v) => v.clone(),
            None => HeaderValue::from(ms),
        }
    }
}

fn models_body(models: &[String]) -> Bytes {
    let list = ModelList {
        object: "list",
        data: models
            .iter()
            .map(|id| Model {
                id,
                object: "model",
                created: CREATED,
                owned_by: "gatebench",
            })
            .collect(),
    };
    // Invariant: the wire types always serialise.
    permanent(&serde_json::to_vec(&list).expect("model list serialises"))
}

/// The headers OpenAI sends on a completion, with fixed, plausible values.
fn openai_headers(content_type: &'static str) -> HeaderMap {
    header_map(
        content_type,
        &[
            ("openai-processing-ms", "0"),
            ("openai-organization", "gatebench-mock"),
            ("openai-version", "2020-10-01"),
            ("x-request-id", REQUEST_ID),
            ("x-ratelimit-limit-requests", "10000"),
            ("x-ratelimit-limit-tokens", "30000000"),
            ("x-ratelimit-remaining-requests", "9999"),
            ("x-ratelimit-remaining-tokens", "29999990"),
            ("x-ratelimit-reset-requests", "6ms"),
            ("x-ratelimit-reset-tokens", "0s"),
        ],
    )
}

/// The headers Azure OpenAI sends on a completion, with fixed, plausible values.
fn azure_headers(content_type: &'static str) -> HeaderMap {
    header_map(
        content_type,
        &[
            ("apim-request-id", REQUEST_ID),
            ("x-request-id", REQUEST_ID),
            ("x-ms-region", "East US"),
            ("x-ms-rai-invoked", "true"),
            ("x-ratelimit-limit-requests", "10000"),
            ("x-ratelimit-limit-tokens", "30000000"),
            ("x-ratelimit-remaining-requests", "9999"),
            ("x-ratelimit-remaining-tokens", "29999990"),
            ("azureml-model-session", "gatebench-mock"),
            ("x-content-type-options", "nosniff"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::payload::MAX_PIECES;
    use crate::catalog::template::Fill;
    use gatebench_shared::wire::openai::{ChatCompletion, Choice, FinishReason, Message, Usage};

    #[test]
    fn every_template_fits_a_frame() {
        let catalog = Catalog::build(&Config::default());
        let mut templates = catalog.chat(Dialect::OpenAi).all();
        templates.extend(catalog.chat(Dialect::Azure).all());
        // Whole bodies are filled into one frame without a copy; only stream events may take
        // two. (The Responses API's whole response, with its echoed parameters, is larger and
        // is copied into one buffer: `Template::fill`.)
        use gatebench_shared::wire::anthropic::StopReason;
        templates.extend([
            catalog.anthropic.message(StopReason::EndTurn),
            catalog.anthropic.message(StopReason::MaxTokens),
            catalog.anthropic.message(StopReason::Refusal),
        ]);
        use gatebench_shared::wire::gemini::FinishReason as GeminiFinish;
        for f in GeminiFinish::ALL {
            templates.extend([catalog.gemini.whole(f), catalog.gemini.last_chunk(f)]);
        }
        for t in templates {
            assert!(t.pieces() <= MAX_PIECES);
        }
    }

    #[test]
    fn completion_matches_the_wire_type_with_real_values() {
        let catalog = Catalog::build(&Config::default());
        let model = Bytes::from_static(b"gpt-4o-mini");
        let content = catalog.content(3);
        assert_eq!(&content[..], b"Hello from the");
        let frame = catalog
            .chat(Dialect::OpenAi)
            .completion(FinishReason::Length)
            .fill(&Fill {
                model: &model,
                content: &content,
                prompt_tokens: 20,
                completion_tokens: 3,
                sequence: 0,
                echo: &Bytes::new(),
            });
        let expected = ChatCompletion {
            id: COMPLETION_ID,
            object: "chat.completion",
            created: CREATED,
            model: "gpt-4o-mini",
            choices: [Choice {
                index: 0,
                message: Message {
                    role: "assistant",
                    content: "Hello from the",
                    refusal: None,
                },
                logprobs: None,
                finish_reason: FinishReason::Length,
                content_filter_results: None,
            }],
            usage: Usage {
                prompt_tokens: 20,
                completion_tokens: 3,
                total_tokens: 23,
            },
            system_fingerprint: SYSTEM_FINGERPRINT,
            prompt_filter_results: None,
        };
        assert_eq!(frame.to_vec(), serde_json::to_vec(&expected).unwrap());
    }

    #[test]
    fn tokens_cycle_and_content_is_their_concatenation() {
        let config = Config {
            latency: gatebench_shared::LatencyModel {
                tokens: gatebench_shared::TokenCount::Fixed(40),
                ..Default::default()
            },
            ..Config::default()
        };
        let catalog = Catalog::build(&config);
        let joined: Vec<u8> = (0..40).flat_map(|k| catalog.token(k).to_vec()).collect();
        assert_eq!(&catalog.content(40)[..], &joined[..]);
        assert_eq!(catalog.token(16), catalog.token(32));
        // Past the configured draw (`x-mock-tokens: 99`), the text still has every token.
        let longer: Vec<u8> = (0..99).flat_map(|k| catalog.token(k).to_vec()).collect();
        assert_eq!(&catalog.content(99)[..], &longer[..]);
    }

    #[test]
    fn processing_ms_header_is_exact_beyond_the_table() {
        let catalog = Catalog::build(&Config::default());
        let json = |ms| FixedHeaders::OpenAiJson { processing_ms: ms };
        assert_eq!(catalog.fixed_map(json(7))[PROCESSING_MS], "7");
        assert_eq!(catalog.fixed_map(json(123_456))[PROCESSING_MS], "123456");
        assert_eq!(
            catalog.fixed_map(FixedHeaders::OpenAiSse)[hyper::header::CONTENT_TYPE],
            "text/event-stream; charset=utf-8"
        );
        let mut out = bytes::BytesMut::new();
        catalog.put_fixed(json(123_456), &mut out);
        let text = String::from_utf8(out.to_vec()).unwrap();
        assert!(text.contains("openai-processing-ms: 123456\r\n"), "{text}");
        assert!(
            text.contains("content-type: application/json\r\n"),
            "{text}"
        );
    }
}
