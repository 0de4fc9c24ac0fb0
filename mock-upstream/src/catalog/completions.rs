//! OpenAI's legacy completions, pre-encoded: the text completion and its stream chunks.

use gatebench_shared::wire::completions::{TextChoice, TextChunk, TextCompletion};
use gatebench_shared::wire::openai::{ChunkUsage, FinishReason, Usage};

use crate::catalog::template::{Slot, Template};

use super::{UsageKey, CREATED, SYSTEM_FINGERPRINT};

/// `id` of every text completion.
pub const TEXT_COMPLETION_ID: &str = "cmpl-gatebench000000000000000000000";

/// The pre-encoded legacy completions. Indexed by finish reason and [`UsageKey`].
#[derive(Debug)]
pub struct CompletionsCatalog {
    completion: [Template; 3],
    chunk_text: [Template; 2],
    chunk_finish: [[Template; 2]; 3],
    chunk_usage: Template,
}

const FINISHES: [FinishReason; 3] = FinishReason::ALL;
const USAGE_KEYS: [UsageKey; 2] = [UsageKey::Absent, UsageKey::Null];

impl CompletionsCatalog {
    pub fn build() -> CompletionsCatalog {
        CompletionsCatalog {
            completion: FINISHES.map(|f| {
                let body = TextCompletion {
                    id: TEXT_COMPLETION_ID,
                    object: "text_completion",
                    created: CREATED,
                    model: Slot::MODEL_SENTINEL,
                    choices: [choice(Slot::CONTENT_SENTINEL, Some(f))],
                    usage: sentinel_usage(),
                    system_fingerprint: SYSTEM_FINGERPRINT,
                };
                // Invariant: the wire types always serialise.
                Template::parse(&serde_json::to_vec(&body).expect("completion serialises"))
            }),
            chunk_text: USAGE_KEYS
                .map(|u| chunk(vec![choice(Slot::CONTENT_SENTINEL, None)], usage_key(u))),
            chunk_finish: FINISHES
                .map(|f| USAGE_KEYS.map(|u| chunk(vec![choice("", Some(f))], usage_key(u)))),
            chunk_usage: chunk(Vec::new(), ChunkUsage::Usage(sentinel_usage())),
        }
    }

    pub fn completion(&self, finish: FinishReason) -> &Template {
        &self.completion[finish as usize]
    }

    /// A chunk carrying one token's text.
    pub fn chunk_text(&self, usage: UsageKey) -> &Template {
        &self.chunk_text[usage as usize]
    }

    /// The chunk with empty text and the finish reason.
    pub fn chunk_finish(&self, finish: FinishReason, usage: UsageKey) -> &Template {
        &self.chunk_finish[finish as usize][usage as usize]
    }

    /// The last chunk when `include_usage` is set.
    pub fn chunk_usage(&self) -> &Template {
        &self.chunk_usage
    }
}

fn choice(text: &'static str, finish_reason: Option<FinishReason>) -> TextChoice<'static> {
    TextChoice {
        text,
        index: 0,
        logprobs: None,
        finish_reason,
    }
}

fn usage_key(u: UsageKey) -> ChunkUsage {
    match u {
        UsageKey::Absent => ChunkUsage::Absent,
        UsageKey::Null => ChunkUsage::Null,
    }
}

fn sentinel_usage() -> Usage {
    Usage {
        prompt_tokens: Slot::PROMPT_SENTINEL,
        completion_tokens: Slot::COMPLETION_SENTINEL,
        total_tokens: Slot::TOTAL_SENTINEL,
    }
}

fn chunk(choices: Vec<TextChoice<'static>>, usage: ChunkUsage) -> Template {
    let chunk = TextChunk {
        id: TEXT_COMPLETION_ID,
        object: "text_completion",
        created: CREATED,
        choices,
        model: Slot::MODEL_SENTINEL,
        system_fingerprint: SYSTEM_FINGERPRINT,
        usage,
    };
    let mut frame = b"data: ".to_vec();
    // Invariant: the wire types always serialise.
    serde_json::to_writer(&mut frame, &chunk).expect("chunk serialises");
    frame.extend_from_slice(b"\n\n");
    Template::parse(&frame)
}
