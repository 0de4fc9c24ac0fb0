//! The cache's figures written into an answer, where each API reports them:
//!
//! - chat: `usage.prompt_tokens_details.{cached_tokens, cache_write_tokens}`, both inside
//!   `prompt_tokens`;
//! - Responses: `usage.input_tokens_details.{cached_tokens, cache_write_tokens}`, inside
//!   `input_tokens`;
//! - Anthropic: `cache_read_input_tokens`, `cache_creation_input_tokens` and
//!   `cache_creation.{ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}` beside an
//!   `input_tokens` that excludes them (in `message_start` and `message_delta` when
//!   streamed);
//! - Gemini: `usageMetadata.cachedContentTokenCount` when above 0, inside `promptTokenCount`;
//! - Bedrock: `usage.cacheReadInputTokens` and `cacheWriteInputTokens` beside an
//!   `inputTokens` that excludes them (`totalTokens` counts every token).
//!
//! An answer's bytes are the pre-encoded ones with these keys put in: the mock's own bytes,
//! so each key's place is known. Built per answer, on the cache's path only.

use super::CacheUsage;
use crate::config::Api;

/// `answer` (a whole body or one stream event of `api`) with the cache's figures in its
/// usage; `None` when it carries no usage.
pub fn report(api: Api, answer: &[u8], usage: &CacheUsage, prompt_tokens: u64) -> Option<Vec<u8>> {
    let (read, written) = (usage.read, usage.written());
    let uncached = prompt_tokens.saturating_sub(read + written);
    match api {
        Api::Chat => after_number(
            answer,
            b"\"total_tokens\":",
            &format!(
                ",\"prompt_tokens_details\":{{\"cached_tokens\":{read},\"cache_write_tokens\":{written}}}"
            ),
        ),
        Api::Responses => {
            let read_set = replace(answer, b"\"cached_tokens\":0", &format!("\"cached_tokens\":{read}"))?;
            let written_set = format!("\"cache_write_tokens\":{written}");
            replace(&read_set, b"\"cache_write_tokens\":0", &written_set)
        }
        Api::Messages => {
            let figures = format!(
                "\"cache_creation_input_tokens\":{written},\"cache_read_input_tokens\":{read}"
            );
            let start = format!(
                "\"input_tokens\":{uncached},{figures},\"cache_creation\":{{\"ephemeral_5m_input_tokens\":{},\"ephemeral_1h_input_tokens\":{}}}",
                usage.write_5m, usage.write_1h
            );
            replace(answer, format!("\"input_tokens\":{prompt_tokens}").as_bytes(), &start).or_else(
                || {
                    let delta = format!("\"usage\":{{\"input_tokens\":{uncached},{figures},");
                    replace(answer, b"\"usage\":{\"output_tokens\"", &format!("{delta}\"output_tokens\""))
                },
            )
        }
        Api::Gemini if read > 0 => after_number(
            answer,
            b"\"totalTokenCount\":",
            &format!(",\"cachedContentTokenCount\":{read}"),
        ),
        Api::Bedrock => {
            let input = format!("\"inputTokens\":{uncached}");
            let input_set = replace(answer, format!("\"inputTokens\":{prompt_tokens}").as_bytes(), &input)?;
            after_number(
                &input_set,
                b"\"totalTokens\":",
                &format!(",\"cacheReadInputTokens\":{read},\"cacheWriteInputTokens\":{written}"),
            )
        }
        Api::Gemini | Api::Completions | Api::Embeddings => None,
    }
}

/// `text` with `insert` put after the number that follows the first `key`.
fn after_number(text: &[u8], key: &[u8], insert: &str) -> Option<Vec<u8>> {
    let at = find(text, key)? + key.len();
    let digits = text[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    let end = at + digits;
    let mut out = Vec::with_capacity(text.len() + insert.len());
    out.extend_from_slice(&text[..end]);
    out.extend_from_slice(insert.as_bytes());
    out.extend_from_slice(&text[end..]);
    Some(out)
}

/// `text` with its first `old` replaced by `new`.
fn replace(text: &[u8], old: &[u8], new: &str) -> Option<Vec<u8>> {
    let at = find(text, old)?;
    let mut out = Vec::with_capacity(text.len() + new.len());
    out.extend_from_slice(&text[..at]);
    out.extend_from_slice(new.as_bytes());
    out.extend_from_slice(&text[at + old.len()..]);
    Some(out)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn reported(api: Api, answer: &str, usage: CacheUsage, prompt: u64) -> Value {
        let out = report(api, answer.as_bytes(), &usage, prompt).expect("a usage to report");
        serde_json::from_slice(&out).unwrap()
    }

    const USAGE: CacheUsage = CacheUsage {
        read: 1024,
        write_5m: 128,
        write_1h: 0,
    };

    #[test]
    fn each_api_reports_where_it_does() {
        let chat =
            r#"{"usage":{"prompt_tokens":1200,"completion_tokens":2,"total_tokens":1202},"x":1}"#;
        let v = reported(Api::Chat, chat, USAGE, 1200);
        assert_eq!(v["usage"]["prompt_tokens_details"]["cached_tokens"], 1024);
        assert_eq!(
            v["usage"]["prompt_tokens_details"]["cache_write_tokens"],
            128
        );
        assert_eq!(v["usage"]["prompt_tokens"], 1200);

        let responses = r#"{"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}"#;
        let v = reported(Api::Responses, responses, USAGE, 1200);
        assert_eq!(v["usage"]["input_tokens_details"]["cached_tokens"], 1024);
        assert_eq!(
            v["usage"]["input_tokens_details"]["cache_write_tokens"],
            128
        );

        let message = r#"{"usage":{"input_tokens":1200,"output_tokens":2}}"#;
        let v = reported(Api::Messages, message, USAGE, 1200);
        assert_eq!(v["usage"]["input_tokens"], 48);
        assert_eq!(v["usage"]["cache_read_input_tokens"], 1024);
        assert_eq!(v["usage"]["cache_creation_input_tokens"], 128);
        assert_eq!(
            v["usage"]["cache_creation"]["ephemeral_5m_input_tokens"],
            128
        );
        assert_eq!(v["usage"]["cache_creation"]["ephemeral_1h_input_tokens"], 0);
        let delta = r#"{"type":"message_delta","usage":{"output_tokens":2}}"#;
        let v = reported(Api::Messages, delta, USAGE, 1200);
        assert_eq!(v["usage"]["input_tokens"], 48);
        assert_eq!(v["usage"]["cache_read_input_tokens"], 1024);
        assert_eq!(v["usage"]["output_tokens"], 2);

        let gemini = r#"{"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":2,"totalTokenCount":1202}}"#;
        let v = reported(Api::Gemini, gemini, USAGE, 1200);
        assert_eq!(v["usageMetadata"]["cachedContentTokenCount"], 1024);
        assert!(report(Api::Gemini, gemini.as_bytes(), &CacheUsage::default(), 1200).is_none());

        let bedrock = r#"{"usage":{"inputTokens":1200,"outputTokens":2,"totalTokens":1202}}"#;
        let v = reported(Api::Bedrock, bedrock, USAGE, 1200);
        assert_eq!(v["usage"]["inputTokens"], 48);
        assert_eq!(v["usage"]["cacheReadInputTokens"], 1024);
        assert_eq!(v["usage"]["cacheWriteInputTokens"], 128);
        assert_eq!(v["usage"]["totalTokens"], 1202);

        // An event without usage is left alone.
        assert!(report(Api::Chat, br#"{"choices":[]}"#, &USAGE, 1200).is_none());
    }
}
