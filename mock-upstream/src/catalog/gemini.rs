//! Google's Gemini API, pre-encoded: the whole response, a stream's partial responses (one per
//! token, the last with the finish reason and the usage) and the headers.

use gatebench_shared::wire::gemini::{
    Candidate, FinishReason, GenerateContentResponse, ModelContent, TextPart, UsageMetadata,
};
use hyper::header::HeaderMap;

use super::{header_map, HeaderSet};
use crate::catalog::template::{Slot, Template};

/// `responseId` of every response, constant so the same request always gets the same bytes.
pub const RESPONSE_ID: &str = "gatebench00000000000000";

/// The pre-encoded Gemini responses. Arrays are indexed by [`FinishReason`].
#[derive(Debug)]
pub struct GeminiCatalog {
    whole: [Template; 3],
    chunk: Template,
    last_chunk: [Template; 3],
    pub(super) json_headers: HeaderSet,
    pub(super) sse_headers: HeaderSet,
}

impl GeminiCatalog {
    pub fn build() -> GeminiCatalog {
        GeminiCatalog {
            whole: FinishReason::ALL.map(|f| json(&response(Some(f)))),
            chunk: event(&response(None)),
            last_chunk: FinishReason::ALL.map(|f| event(&response(Some(f)))),
            json_headers: HeaderSet::new(headers("application/json; charset=UTF-8")),
            sse_headers: HeaderSet::new(headers("text/event-stream")),
        }
    }

    /// The whole response.
    pub fn whole(&self, finish: FinishReason) -> &Template {
        &self.whole[finish as usize]
    }

    /// A stream's partial response carrying one token.
    pub fn chunk(&self) -> &Template {
        &self.chunk
    }

    /// A stream's last partial response: the last token, the finish reason and the usage.
    pub fn last_chunk(&self, finish: FinishReason) -> &Template {
        &self.last_chunk[finish as usize]
    }
}

/// A response: with the finish reason and usage when `finish` is given (a whole response and
/// a stream's last), without for a stream's other events.
fn response(finish: Option<FinishReason>) -> GenerateContentResponse<'static> {
    GenerateContentResponse {
        candidates: [Candidate {
            content: ModelContent {
                parts: [TextPart {
                    text: Slot::CONTENT_SENTINEL,
                }],
                role: "model",
            },
            finish_reason: finish,
            index: 0,
        }],
        usage_metadata: finish.map(|_| UsageMetadata {
            prompt_token_count: Slot::PROMPT_SENTINEL,
            candidates_token_count: Slot::COMPLETION_SENTINEL,
            total_token_count: Slot::TOTAL_SENTINEL,
        }),
        model_version: Slot::MODEL_SENTINEL,
        response_id: RESPONSE_ID,
    }
}

fn json(value: &impl serde::Serialize) -> Template {
    // Invariant: the wire types always serialise.
    Template::parse(&serde_json::to_vec(value).expect("response serialises"))
}

/// `data: {…}` and a blank line, with CRLF line ends as Google's SSE has them.
fn event(value: &impl serde::Serialize) -> Template {
    let mut frame = b"data: ".to_vec();
    // Invariant: the wire types always serialise.
    serde_json::to_writer(&mut frame, value).expect("event serialises");
    frame.extend_from_slice(b"\r\n\r\n");
    Template::parse(&frame)
}

/// The headers Google's API sends, with fixed, plausible values.
fn headers(content_type: &'static str) -> HeaderMap {
    header_map(
        content_type,
        &[
            ("vary", "Origin, X-Origin, Referer"),
            ("server", "scaffolding on HTTPServer2"),
            ("x-xss-protection", "0"),
            ("x-frame-options", "SAMEORIGIN"),
            ("x-content-type-options", "nosniff"),
        ],
    )
}
