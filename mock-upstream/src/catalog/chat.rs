//! Chat completions, pre-encoded: the whole completion and the stream's chunks, in OpenAI's
//! dialect and in Azure OpenAI's (the same bodies with its content filter verdicts, and a first
//! chunk with the prompt's).

use bytes::Bytes;
use gatebench_shared::wire::openai::{
    ChatChunk, ChatCompletion, Choice, ChunkChoice, ChunkUsage, Delta, FilterResults, FinishReason,
    Message, PromptFilterResults, Usage,
};

use super::{UsageKey, COMPLETION_ID, CREATED, SYSTEM_FINGERPRINT};
use crate::catalog::template::{permanent, Slot, Template};

/// Whose shape of chat completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    /// Azure OpenAI: `content_filter_results` on every choice, `prompt_filter_results` on the
    /// completion and on a stream's first chunk.
    Azure,
}

/// The chat completion templates of one dialect. Arrays are indexed by [`FinishReason`] and
/// [`UsageKey`].
#[derive(Debug)]
pub struct ChatTemplates {
    completion: [Template; 3],
    chunk_role: [Template; 2],
    chunk_content: [Template; 2],
    chunk_finish: [[Template; 2]; 3],
    chunk_usage: Template,
    /// Azure's first chunk: no choices, the prompt's verdict (empty for OpenAI).
    prompt_filter: Bytes,
}

const USAGE_KEYS: [UsageKey; 2] = [UsageKey::Absent, UsageKey::Null];

impl ChatTemplates {
    pub fn build(dialect: Dialect) -> ChatTemplates {
        let azure = dialect == Dialect::Azure;
        // Azure gives a verdict on each content chunk and `{}`-less verdicts elsewhere; the
        // mock gives the same verdict on every choice (filtered only when the filter ends it).
        let verdict = |finish: Option<FinishReason>| {
            azure.then(|| FilterResults::new(finish == Some(FinishReason::ContentFilter)))
        };
        ChatTemplates {
            completion: FinishReason::ALL.map(|finish| completion(finish, azure)),
            chunk_role: USAGE_KEYS.map(|u| {
                let delta = Delta {
                    role: Some("assistant"),
                    content: Some(""),
                };
                chunk_template(delta, None, verdict(None), u)
            }),
            chunk_content: USAGE_KEYS.map(|u| {
                let delta = Delta {
                    role: None,
                    content: Some(Slot::CONTENT_SENTINEL),
                };
                chunk_template(delta, None, verdict(None), u)
            }),
            chunk_finish: FinishReason::ALL.map(|r| {
                USAGE_KEYS.map(|u| chunk_template(Delta::default(), Some(r), verdict(Some(r)), u))
            }),
            chunk_usage: sse_template(&chunk(Vec::new(), ChunkUsage::Usage(sentinel_usage()))),
            prompt_filter: if azure {
                prompt_filter_chunk()
            } else {
                Bytes::new()
            },
        }
    }

    /// The non-streaming completion.
    pub fn completion(&self, finish: FinishReason) -> &Template {
        &self.completion[finish as usize]
    }

    /// The first chunk: `{"role":"assistant","content":""}`.
    pub fn chunk_role(&self, usage: UsageKey) -> &Template {
        &self.chunk_role[usage as usize]
    }

    /// A content chunk; fill its content with `Catalog::token`.
    pub fn chunk_content(&self, usage: UsageKey) -> &Template {
        &self.chunk_content[usage as usize]
    }

    /// The chunk with an empty delta and the finish reason.
    pub fn chunk_finish(&self, finish: FinishReason, usage: UsageKey) -> &Template {
        &self.chunk_finish[finish as usize][usage as usize]
    }

    /// The last chunk when `include_usage` is set: `"choices":[]` and usage.
    pub fn chunk_usage(&self) -> &Template {
        &self.chunk_usage
    }

    /// Azure's first chunk, with the prompt's verdict.
    pub fn prompt_filter(&self) -> &Bytes {
        &self.prompt_filter
    }

    /// Every template, for the catalog's tests.
    #[cfg(test)]
    pub fn all(&self) -> Vec<&Template> {
        let mut all = vec![&self.chunk_usage];
        all.extend(&self.completion);
        all.extend(&self.chunk_role);
        all.extend(&self.chunk_content);
        all.extend(self.chunk_finish.iter().flatten());
        all
    }
}

fn completion(finish: FinishReason, azure: bool) -> Template {
    let body = ChatCompletion {
        id: COMPLETION_ID,
        object: "chat.completion",
        created: CREATED,
        model: Slot::MODEL_SENTINEL,
        choices: [Choice {
            index: 0,
            message: Message {
                role: "assistant",
                content: Slot::CONTENT_SENTINEL,
                refusal: None,
            },
            logprobs: None,
            finish_reason: finish,
            content_filter_results: azure
                .then(|| FilterResults::new(finish == FinishReason::ContentFilter)),
        }],
        usage: sentinel_usage(),
        system_fingerprint: SYSTEM_FINGERPRINT,
        prompt_filter_results: azure.then(|| [prompt_verdict()]),
    };
    // Invariant: the wire types always serialise.
    Template::parse(&serde_json::to_vec(&body).expect("completion serialises"))
}

fn prompt_verdict() -> PromptFilterResults {
    PromptFilterResults {
        prompt_index: 0,
        content_filter_results: FilterResults::new(false),
    }
}

/// `data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[…]}`,
/// as Azure sends it ahead of a stream's chunks.
fn prompt_filter_chunk() -> Bytes {
    let data = serde_json::json!({
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [prompt_verdict()],
    });
    permanent(format!("data: {data}\n\n").as_bytes())
}

fn chunk(choices: Vec<ChunkChoice<'_>>, usage: ChunkUsage) -> ChatChunk<'_> {
    ChatChunk {
        id: COMPLETION_ID,
        object: "chat.completion.chunk",
        created: CREATED,
        model: Slot::MODEL_SENTINEL,
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices,
        usage,
    }
}

fn sse_template(chunk: &ChatChunk<'_>) -> Template {
    let mut frame = b"data: ".to_vec();
    // Invariant: the wire types always serialise.
    serde_json::to_writer(&mut frame, chunk).expect("chunk serialises");
    frame.extend_from_slice(b"\n\n");
    Template::parse(&frame)
}

fn chunk_template(
    delta: Delta<'_>,
    finish: Option<FinishReason>,
    content_filter_results: Option<FilterResults>,
    usage: UsageKey,
) -> Template {
    let choice = ChunkChoice {
        index: 0,
        delta,
        logprobs: None,
        finish_reason: finish,
        content_filter_results,
    };
    let usage = match usage {
        UsageKey::Absent => ChunkUsage::Absent,
        UsageKey::Null => ChunkUsage::Null,
    };
    sse_template(&chunk(vec![choice], usage))
}

pub(super) fn sentinel_usage() -> Usage {
    Usage {
        prompt_tokens: Slot::PROMPT_SENTINEL,
        completion_tokens: Slot::COMPLETION_SENTINEL,
        total_tokens: Slot::TOTAL_SENTINEL,
    }
}
