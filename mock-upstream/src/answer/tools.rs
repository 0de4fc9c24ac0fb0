//! Answers that call a tool (`--tool-calls`): OpenAI's `tool_calls` (streamed as `arguments`
//! deltas with their `index`), the Responses API's `function_call` output item (streamed as
//! `response.function_call_arguments.delta`) and Anthropic's `tool_use` (streamed as
//! `input_json_delta`).
//!
//! The call is to the first tool the request offers, with arguments `{"input":"<the usual
//! output text>"}`: one fragment per output token, so a tool-call stream has the same events
//! and timing as a text stream of the same length. These answers are built per request (the
//! tool name is the request's); they are the opt-in path, not the pre-encoded hot path.

use bytes::Bytes;
use gatebench_shared::wire::tools::ToolsRequest;
use serde_json::{json, Value};

use crate::catalog::payload::Payload;
use crate::catalog::{Outcome, COMPLETION_ID, CREATED, RESPONSE_ID, SYSTEM_FINGERPRINT};
use crate::state::State;

/// `id` of every OpenAI tool call.
pub const CALL_ID: &str = "call_gatebench00000000000000";
/// `id` of every Responses API `function_call` item.
pub const FUNCTION_CALL_ID: &str = "fc_gatebench00000000000000000000";
/// `id` of every Anthropic `tool_use` block.
pub const TOOL_USE_ID: &str = "toolu_gatebench0000000000000";

/// The request's tool fields, read only when `--tool-calls` may answer with a call.
pub fn scan<'a>(state: &State, body: &'a [u8]) -> Option<ToolsRequest<'a>> {
    if state.config.tool_calls <= 0.0 {
        return None;
    }
    serde_json::from_slice(body).ok()
}

/// What a tool-call answer needs from its request.
#[derive(Debug, Clone)]
pub struct ToolAnswer {
    /// The tool's name, as the request wrote it.
    pub name: String,
    /// The model, as the request wrote it.
    pub model: String,
    pub prompt_tokens: u64,
    /// Output tokens: one argument fragment each.
    pub tokens: u32,
}

impl ToolAnswer {
    /// A tool answer for `name`; `model` is the JSON-escaped model the route echoes.
    pub fn new(name: &str, model: &Bytes, prompt_tokens: u64, tokens: u32) -> ToolAnswer {
        let escaped = String::from_utf8_lossy(model);
        let model = serde_json::from_str::<String>(&format!("\"{escaped}\""))
            .unwrap_or_else(|_| escaped.into_owned());
        ToolAnswer {
            name: name.to_string(),
            model,
            prompt_tokens,
            tokens,
        }
    }

    /// Argument fragment `k` of the call: `{"input":"` + token 0, the tokens, the last + `"}`.
    fn fragment(&self, state: &State, k: u32) -> String {
        let mut out = String::new();
        if k == 0 {
            out.push_str("{\"input\":\"");
        }
        // The output tokens are plain words: their JSON-escaped form is the text itself.
        out.push_str(&String::from_utf8_lossy(state.catalog.token(k)));
        if k + 1 == self.tokens {
            out.push_str("\"}");
        }
        out
    }

    /// The whole arguments string.
    fn arguments(&self, state: &State) -> String {
        if self.tokens == 0 {
            return "{}".to_string();
        }
        (0..self.tokens).map(|k| self.fragment(state, k)).collect()
    }

    fn usage(&self) -> Value {
        let completion = u64::from(self.tokens);
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": self.prompt_tokens + completion,
        })
    }

    /// OpenAI's non-streaming completion with one tool call.
    pub fn openai_completion(&self, state: &State) -> Payload {
        whole(&json!({
            "id": COMPLETION_ID,
            "object": "chat.completion",
            "created": CREATED,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": self.name, "arguments": self.arguments(state)},
                    }],
                    "refusal": null,
                },
                "logprobs": null,
                "finish_reason": "tool_calls",
            }],
            "usage": self.usage(),
            "system_fingerprint": SYSTEM_FINGERPRINT,
        }))
    }

    /// OpenAI chunk `event` of a tool-call stream: the call's head, one `arguments` delta per
    /// token, the `tool_calls` finish; `None` for the events a text stream shares (usage,
    /// `[DONE]`).
    pub fn openai_chunk(&self, state: &State, event: u32, usage_key: bool) -> Option<Payload> {
        let n = self.tokens;
        let (delta, finish) = match event {
            0 => (
                json!({
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "index": 0,
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": self.name, "arguments": ""},
                    }],
                    "refusal": null,
                }),
                Value::Null,
            ),
            e if e <= n => (
                json!({"tool_calls": [{
                    "index": 0,
                    "function": {"arguments": self.fragment(state, e - 1)},
                }]}),
                Value::Null,
            ),
            e if e == n + 1 => (json!({}), json!("tool_calls")),
            _ => return None,
        };
        let mut chunk = json!({
            "id": COMPLETION_ID,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if usage_key {
            chunk["usage"] = Value::Null;
        }
        Some(sse(None, &chunk))
    }

    /// Anthropic's non-streaming message with one `tool_use` block.
    pub fn anthropic_message(&self, state: &State) -> Payload {
        let input: Value =
            serde_json::from_str(&self.arguments(state)).unwrap_or_else(|_| json!({}));
        whole(&json!({
            "id": crate::catalog::MESSAGE_ID,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [{"type": "tool_use", "id": TOOL_USE_ID, "name": self.name, "input": input}],
            "stop_reason": "tool_use",
            "stop_sequence": null,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": self.tokens},
        }))
    }

    /// Anthropic event `event` of a `tool_use` stream where it differs from a text stream:
    /// the block's start, its `input_json_delta`s and the `tool_use` stop; `None` for the
    /// events they share (`message_start`, `ping`, `content_block_stop`, `message_stop`).
    pub fn anthropic_event(&self, state: &State, event: u32) -> Option<Payload> {
        let n = self.tokens;
        match event {
            1 => Some(sse(
                Some("content_block_start"),
                &json!({
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {
                        "type": "tool_use", "id": TOOL_USE_ID, "name": self.name, "input": {},
                    },
                }),
            )),
            e if (3..3 + n).contains(&e) => Some(sse(
                Some("content_block_delta"),
                &json!({
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": self.fragment(state, e - 3)},
                }),
            )),
            e if e == 4 + n => Some(sse(
                Some("message_delta"),
                &json!({
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                    "usage": {"output_tokens": n},
                }),
            )),
            _ => None,
        }
    }
}

/// The Responses API's `function_call` answers.
impl ToolAnswer {
    /// The `function_call` output item, `done` with the whole arguments or just added.
    fn function_call(&self, state: &State, done: bool) -> Value {
        let (arguments, status) = if done {
            (self.arguments(state), "completed")
        } else {
            (String::new(), "in_progress")
        };
        json!({
            "type": "function_call",
            "id": FUNCTION_CALL_ID,
            "call_id": CALL_ID,
            "name": self.name,
            "arguments": arguments,
            "status": status,
        })
    }

    /// The response object: in progress (no output yet), or finished with the call.
    fn response(&self, state: &State, finished: Option<Outcome>, echo: &Bytes) -> Value {
        let (status, incomplete, output, usage) = match finished {
            None => ("in_progress", Value::Null, json!([]), Value::Null),
            Some(outcome) => {
                let completion = u64::from(self.tokens);
                let usage = json!({
                    "input_tokens": self.prompt_tokens,
                    "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                    "output_tokens": completion,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": self.prompt_tokens + completion,
                });
                let (status, incomplete) = match outcome {
                    Outcome::Completed => ("completed", Value::Null),
                    Outcome::Incomplete => ("incomplete", json!({"reason": "max_output_tokens"})),
                    Outcome::Filtered => ("incomplete", json!({"reason": "content_filter"})),
                };
                let output = json!([self.function_call(state, true)]);
                (status, incomplete, output, usage)
            }
        };
        let mut response = json!({
            "id": RESPONSE_ID,
            "object": "response",
            "created_at": CREATED,
            "status": status,
            "error": null,
            "incomplete_details": incomplete,
            "model": self.model,
            "output": output,
            "usage": usage,
        });
        // The echoed parameters are keys without their braces (`catalog::ResponsesCatalog::echo`).
        let mut params = Vec::with_capacity(echo.len() + 2);
        params.push(b'{');
        params.extend_from_slice(echo);
        params.push(b'}');
        if let (Some(object), Ok(Value::Object(params))) = (
            response.as_object_mut(),
            serde_json::from_slice::<Value>(&params),
        ) {
            object.extend(params);
        }
        response
    }

    /// The non-streaming response whose output is the call.
    pub fn responses_whole(&self, state: &State, outcome: Outcome, echo: &Bytes) -> Payload {
        whole(&self.response(state, Some(outcome), echo))
    }

    /// Event `event` of a Responses stream that calls the tool: `response.created`,
    /// `response.in_progress`, the item added, one arguments delta per token, the arguments
    /// done, the item done, and `response.completed` (or `response.incomplete`).
    pub fn responses_event(
        &self,
        state: &State,
        event: u32,
        outcome: Outcome,
        echo: &Bytes,
    ) -> Payload {
        let n = self.tokens;
        let (name, mut data) = match event {
            0 | 1 => {
                let name = if event == 0 {
                    "response.created"
                } else {
                    "response.in_progress"
                };
                (name, json!({"response": self.response(state, None, echo)}))
            }
            2 => (
                "response.output_item.added",
                json!({"output_index": 0, "item": self.function_call(state, false)}),
            ),
            e if e < 3 + n => (
                "response.function_call_arguments.delta",
                json!({
                    "item_id": FUNCTION_CALL_ID,
                    "output_index": 0,
                    "delta": self.fragment(state, e - 3),
                }),
            ),
            e if e == 3 + n => (
                "response.function_call_arguments.done",
                json!({
                    "item_id": FUNCTION_CALL_ID,
                    "output_index": 0,
                    "name": self.name,
                    "arguments": self.arguments(state),
                }),
            ),
            e if e == 4 + n => (
                "response.output_item.done",
                json!({"output_index": 0, "item": self.function_call(state, true)}),
            ),
            _ => {
                let name = outcome.last_event();
                (
                    name,
                    json!({"response": self.response(state, Some(outcome), echo)}),
                )
            }
        };
        if let Some(object) = data.as_object_mut() {
            object.insert("type".into(), json!(name));
            object.insert("sequence_number".into(), json!(event));
        }
        sse(Some(name), &data)
    }
}

fn whole(body: &Value) -> Payload {
    let mut payload = Payload::new();
    payload.push_bytes(&Bytes::from(body.to_string()));
    payload
}

fn sse(name: Option<&str>, data: &Value) -> Payload {
    let mut frame = String::new();
    if let Some(name) = name {
        frame.push_str("event: ");
        frame.push_str(name);
        frame.push('\n');
    }
    frame.push_str("data: ");
    frame.push_str(&data.to_string());
    frame.push_str("\n\n");
    let mut payload = Payload::new();
    payload.push_bytes(&Bytes::from(frame));
    payload
}
