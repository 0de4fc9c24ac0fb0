//! Anthropic's Messages API, pre-encoded: the message, every stream event and the headers.

use bytes::Bytes;
use gatebench_shared::wire::anthropic::{
    BlockDelta, BlockStart, BlockStop, Message, MessageDelta, MessageStart, OutputUsage, StopDelta,
    StopReason, TextBlock, Usage,
};
use hyper::header::{HeaderMap, HeaderValue, CACHE_CONTROL};

use super::{header_map, HeaderSet};
use crate::catalog::template::{permanent, Slot, Template};

/// `id` of every message, constant so the same request always gets the same bytes.
pub const MESSAGE_ID: &str = "msg_gatebench000000000000000";
/// `request-id` of every response.
pub const REQUEST_ID: &str = "req_gatebench000000000000000";

/// The pre-encoded Messages API responses.
#[derive(Debug)]
pub struct AnthropicCatalog {
    message: [Template; 3],
    message_start: Template,
    block_start: Bytes,
    ping: Bytes,
    delta: Template,
    block_stop: Bytes,
    message_delta: [Template; 3],
    message_stop: Bytes,
    pub(super) json_headers: HeaderSet,
    pub(super) sse_headers: HeaderSet,
}

impl AnthropicCatalog {
    pub fn build() -> AnthropicCatalog {
        AnthropicCatalog {
            message: StopReason::ALL.map(|r| {
                json_template(&message(
                    vec![TextBlock {
                        kind: "text",
                        text: Slot::CONTENT_SENTINEL,
                    }],
                    Some(r),
                    Slot::COMPLETION_SENTINEL,
                ))
            }),
            message_start: event_template(
                "message_start",
                &MessageStart {
                    kind: "message_start",
                    message: message(Vec::new(), None, 1),
                },
            ),
            block_start: event_bytes(
                "content_block_start",
                &BlockStart {
                    kind: "content_block_start",
                    index: 0,
                    content_block: TextBlock {
                        kind: "text",
                        text: "",
                    },
                },
            ),
            ping: event_bytes(
                "ping",
                &BlockStop {
                    kind: "ping",
                    index: None,
                },
            ),
            delta: event_template(
                "content_block_delta",
                &BlockDelta {
                    kind: "content_block_delta",
                    index: 0,
                    delta: TextBlock {
                        kind: "text_delta",
                        text: Slot::CONTENT_SENTINEL,
                    },
                },
            ),
            block_stop: event_bytes(
                "content_block_stop",
                &BlockStop {
                    kind: "content_block_stop",
                    index: Some(0),
                },
            ),
            message_delta: StopReason::ALL.map(|r| {
                event_template(
                    "message_delta",
                    &MessageDelta {
                        kind: "message_delta",
                        delta: StopDelta {
                            stop_reason: r,
                            stop_sequence: None,
                        },
                        usage: OutputUsage {
                            output_tokens: Slot::COMPLETION_SENTINEL,
                        },
                    },
                )
            }),
            message_stop: event_bytes(
                "message_stop",
                &BlockStop {
                    kind: "message_stop",
                    index: None,
                },
            ),
            json_headers: HeaderSet::new(headers("application/json")).with_resets(),
            sse_headers: {
                let mut h = headers("text/event-stream; charset=utf-8");
                h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                HeaderSet::new(h).with_resets()
            },
        }
    }

    /// The non-streaming message.
    pub fn message(&self, stop: StopReason) -> &Template {
        &self.message[stop as usize]
    }

    /// `message_start`, with the input tokens and one output token.
    pub fn message_start(&self) -> &Template {
        &self.message_start
    }

    pub fn block_start(&self) -> &Bytes {
        &self.block_start
    }

    pub fn ping(&self) -> &Bytes {
        &self.ping
    }

    /// A `content_block_delta`; fill its text with the token.
    pub fn delta(&self) -> &Template {
        &self.delta
    }

    pub fn block_stop(&self) -> &Bytes {
        &self.block_stop
    }

    /// `message_delta` with the stop reason and the cumulative output tokens.
    pub fn message_delta(&self, stop: StopReason) -> &Template {
        &self.message_delta[stop as usize]
    }

    pub fn message_stop(&self) -> &Bytes {
        &self.message_stop
    }
}

fn message<'a>(
    content: Vec<TextBlock<'a>>,
    stop_reason: Option<StopReason>,
    output_tokens: u64,
) -> Message<'a> {
    Message {
        id: MESSAGE_ID,
        kind: "message",
        role: "assistant",
        model: Slot::MODEL_SENTINEL,
        content,
        stop_reason,
        stop_sequence: None,
        usage: Usage {
            input_tokens: Slot::PROMPT_SENTINEL,
            output_tokens,
        },
    }
}

fn json_template(value: &impl serde::Serialize) -> Template {
    // Invariant: the wire types always serialise.
    Template::parse(&serde_json::to_vec(value).expect("message serialises"))
}

fn event_frame(name: &str, data: &impl serde::Serialize) -> Vec<u8> {
    let mut frame = format!("event: {name}\ndata: ").into_bytes();
    // Invariant: the wire types always serialise.
    serde_json::to_writer(&mut frame, data).expect("event serialises");
    frame.extend_from_slice(b"\n\n");
    frame
}

fn event_template(name: &str, data: &impl serde::Serialize) -> Template {
    Template::parse(&event_frame(name, data))
}

fn event_bytes(name: &str, data: &impl serde::Serialize) -> Bytes {
    permanent(&event_frame(name, data))
}

/// The headers Anthropic sends, with fixed, plausible values (the reset times are added per
/// answer: `HeaderSet::with_resets`).
fn headers(content_type: &'static str) -> HeaderMap {
    header_map(
        content_type,
        &[
            ("request-id", REQUEST_ID),
            ("anthropic-organization-id", "gatebench-mock"),
            ("anthropic-ratelimit-requests-limit", "4000"),
            ("anthropic-ratelimit-requests-remaining", "3999"),
            ("anthropic-ratelimit-tokens-limit", "400000"),
            ("anthropic-ratelimit-tokens-remaining", "399990"),
        ],
    )
}
