//! A conversation's request bodies, built when each turn is due: the run's body (model,
//! `stream`, `stream_options`, whatever else it sets) with its messages replaced by the history
//! so far and the turn's new message, in OpenAI chat's shape, the Responses API's (`input`
//! items, function calls and `function_call_output` items) or Anthropic messages' (the system
//! prompt in `system`, tool calls as `tool_use` blocks and their results as `tool_result`).

use serde_json::{json, Map, Value};

use crate::generator::sessions::answer::{Answer, ToolCall};
use crate::generator::sessions::{Role, Session};

/// The API whose shape the bodies take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI chat completions (also Azure's, and what most gateways take).
    Chat,
    /// Anthropic messages.
    Messages,
    /// OpenAI's Responses API (`input` items, function calls and their outputs as items).
    Responses,
}

impl Dialect {
    /// The dialect of a target's route: Anthropic's `/v1/messages`, else chat.
    pub fn of_path(path: &str) -> Dialect {
        let path = path.trim_end_matches('/');
        if path.ends_with("/messages") {
            Dialect::Messages
        } else if path.ends_with("/responses") {
            Dialect::Responses
        } else {
            Dialect::Chat
        }
    }

    /// The body's key of the conversation.
    fn key(self) -> &'static str {
        match self {
            Dialect::Responses => "input",
            _ => "messages",
        }
    }
}

/// One session's history, and the body of its next request.
#[derive(Debug, Clone)]
pub struct Conversation {
    dialect: Dialect,
    /// The run's body without its messages.
    base: Map<String, Value>,
    messages: Vec<Value>,
    /// Not yet put before a message.
    salt: Option<String>,
}

impl Conversation {
    /// A conversation of `session` on `base_body` (the run's request body, a JSON object),
    /// `salt` before its first message.
    pub fn new(
        dialect: Dialect,
        base_body: &[u8],
        session: &Session,
        salt: Option<&str>,
    ) -> Conversation {
        let mut base = match serde_json::from_slice::<Value>(base_body) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        base.remove("messages");
        base.remove("input");
        if dialect != Dialect::Chat {
            // Chat's; Anthropic's and the Responses API take no such field.
            base.remove("stream_options");
        }
        if dialect == Dialect::Responses {
            if let Some(n) = base.remove("max_tokens") {
                base.insert("max_output_tokens".into(), n);
            }
        }
        if let Some(model) = &session.model {
            base.insert("model".into(), model.clone().into());
        }
        if let Some(tools) = &session.tools {
            let tools = match dialect {
                Dialect::Chat => (**tools).clone(),
                Dialect::Messages => tools_as(tools, anthropic_tool),
                Dialect::Responses => tools_as(tools, responses_tool),
            };
            base.insert("tools".into(), tools);
        }
        let mut messages = Vec::new();
        let mut system = Vec::new();
        for m in &session.preamble {
            match (dialect, m.role) {
                (Dialect::Messages, Role::System) => system.push(m.content.as_str()),
                _ => messages.push(json!({"role": m.role.as_str(), "content": m.content})),
            }
        }
        let mut conversation = Conversation {
            dialect,
            base,
            messages,
            salt: salt.map(str::to_string),
        };
        if !system.is_empty() {
            let system = conversation.salted(system.join("\n\n"));
            conversation.base.insert("system".into(), system.into());
        } else if let Some(first) = conversation.messages.first_mut() {
            let text = first["content"].as_str().unwrap_or_default().to_string();
            let salt = conversation.salt.take().unwrap_or_default();
            first["content"] = format!("{salt}{text}").into();
        }
        conversation
    }

    /// `text` after the salt, which goes before the first message only.
    fn salted(&mut self, text: String) -> String {
        match self.salt.take() {
            Some(salt) => salt + &text,
            None => text,
        }
    }

    /// Adds the user's new message.
    pub fn user(&mut self, text: &str) {
        let text = self.salted(text.to_string());
        self.messages.push(json!({"role": "user", "content": text}));
    }

    /// Adds the upstream's answer as the client resends it: its text byte for byte, its tool
    /// calls as they came.
    pub fn answered(&mut self, answer: &Answer) {
        let message = match self.dialect {
            Dialect::Chat if answer.calls.is_empty() => {
                json!({"role": "assistant", "content": answer.text})
            }
            Dialect::Chat => {
                let calls: Vec<Value> = answer.calls.iter().map(chat_call).collect();
                let content = if answer.text.is_empty() {
                    Value::Null
                } else {
                    answer.text.clone().into()
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            Dialect::Responses => {
                if !answer.text.is_empty() {
                    self.messages
                        .push(json!({"role": "assistant", "content": answer.text}));
                }
                for call in &answer.calls {
                    self.messages
                        .push(json!({"type": "function_call", "call_id": call.id,
                        "name": call.name, "arguments": call.arguments}));
                }
                return;
            }
            Dialect::Messages => {
                let mut blocks = Vec::new();
                if !answer.text.is_empty() {
                    blocks.push(json!({"type": "text", "text": answer.text}));
                }
                for call in &answer.calls {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                        "input": input}));
                }
                json!({"role": "assistant", "content": blocks})
            }
        };
        self.messages.push(message);
    }

    /// Adds a result of `tokens` tokens for each of `calls`, as an agent loop sends them back.
    pub fn tool_results(&mut self, calls: &[ToolCall], tokens: u32) {
        let result = tool_result_text(tokens);
        match self.dialect {
            Dialect::Chat => {
                for call in calls {
                    self.messages
                        .push(json!({"role": "tool", "tool_call_id": call.id, "content": result}));
                }
            }
            Dialect::Responses => {
                for call in calls {
                    self.messages.push(json!({"type": "function_call_output",
                        "call_id": call.id, "output": result}));
                }
            }
            Dialect::Messages => {
                let blocks: Vec<Value> = calls
                    .iter()
                    .map(|c| json!({"type": "tool_result", "tool_use_id": c.id, "content": result}))
                    .collect();
                self.messages
                    .push(json!({"role": "user", "content": blocks}));
            }
        }
    }

    /// The body of the next request, asking for `max_tokens` when given.
    pub fn body(&self, max_tokens: Option<u32>) -> Vec<u8> {
        let mut body = self.base.clone();
        if let Some(n) = max_tokens {
            let key = if self.dialect == Dialect::Responses {
                "max_output_tokens"
            } else if body.contains_key("max_completion_tokens") {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), n.into());
        }
        body.insert(
            self.dialect.key().into(),
            Value::Array(self.messages.clone()),
        );
        // Invariant: a map of JSON values always serializes.
        serde_json::to_vec(&body).expect("a JSON object serializes")
    }

    /// Messages so far.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// True before any message.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

fn chat_call(call: &ToolCall) -> Value {
    json!({"id": call.id, "type": "function",
        "function": {"name": call.name, "arguments": call.arguments}})
}

/// Each function of an OpenAI `tools` array (its `function` object, or the entry itself when
/// it has none), in `shape`'s form.
fn tools_as(tools: &Value, shape: fn(&Value) -> Value) -> Value {
    let each = tools.as_array().into_iter().flatten();
    Value::Array(
        each.map(|t| shape(t.get("function").unwrap_or(t)))
            .collect(),
    )
}

/// A function in Anthropic's form (`name`, `description`, `input_schema`).
fn anthropic_tool(f: &Value) -> Value {
    json!({
        "name": f.get("name").cloned().unwrap_or_else(|| "tool".into()),
        "description": f.get("description").cloned().unwrap_or_else(|| "".into()),
        "input_schema": f.get("parameters").or_else(|| f.get("input_schema")).cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
    })
}

/// A function in the Responses API's form (its fields at the top of the tool).
fn responses_tool(f: &Value) -> Value {
    let mut out = json!({"type": "function",
        "name": f.get("name").cloned().unwrap_or_else(|| "tool".into()),
        "parameters": f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"}))});
    if let Some(d) = f.get("description") {
        out["description"] = d.clone();
    }
    out
}

/// A tool's result of `tokens` tokens by the 4-bytes-a-token estimate, the same every time.
pub fn tool_result_text(tokens: u32) -> String {
    "ok. ".repeat(tokens.max(1) as usize).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::sessions::{Message, Turn};

    fn session() -> Session {
        Session {
            id: "s".into(),
            preamble: vec![Message {
                role: Role::System,
                content: "Be brief.".into(),
            }],
            tools: Some(std::sync::Arc::new(json!([{"type": "function",
                "function": {"name": "look", "parameters": {"type": "object"}}}]))),
            model: None,
            turns: vec![Turn {
                user: "Hi".into(),
                think_us: None,
                max_tokens: None,
                tool_rounds: 1,
                tool_result_tokens: 2,
            }],
        }
    }

    fn parsed(c: &Conversation) -> Value {
        serde_json::from_slice(&c.body(Some(8))).unwrap()
    }

    #[test]
    fn a_chat_history_holds_the_answers_and_the_tool_results() {
        let base = br#"{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":4}"#;
        let mut c = Conversation::new(Dialect::Chat, base, &session(), Some("[s] "));
        c.user("Hi");
        let call = ToolCall {
            id: "call_1".into(),
            name: "look".into(),
            arguments: "{\"input\":\"a\"}".into(),
        };
        c.answered(&Answer {
            text: String::new(),
            calls: vec![call.clone()],
            cache: None,
        });
        c.tool_results(&[call], 2);
        let body = parsed(&c);
        assert_eq!(body["stream"], true);
        assert_eq!(body["max_tokens"], 8);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0]["role"], "system");
        assert_eq!(
            m[0]["content"], "[s] Be brief.",
            "the salt before the first message"
        );
        assert_eq!(m[1]["content"], "Hi", "and only there");
        assert_eq!(
            m[2]["tool_calls"][0]["function"]["arguments"],
            "{\"input\":\"a\"}"
        );
        assert_eq!(m[3]["role"], "tool");
        assert_eq!(m[3]["content"], "ok. ok.");
        assert_eq!(body["tools"][0]["function"]["name"], "look");
    }

    #[test]
    fn an_anthropic_history_puts_the_system_prompt_and_tool_use_in_their_places() {
        let mut c = Conversation::new(
            Dialect::Messages,
            br#"{"model":"claude"}"#,
            &session(),
            None,
        );
        c.user("Hi");
        c.answered(&Answer {
            text: "Let me look.".into(),
            calls: vec![ToolCall {
                id: "toolu_1".into(),
                name: "look".into(),
                arguments: "{\"q\":1}".into(),
            }],
            cache: None,
        });
        c.tool_results(
            &[ToolCall {
                id: "toolu_1".into(),
                ..ToolCall::default()
            }],
            1,
        );
        let body = parsed(&c);
        assert_eq!(body["system"], "Be brief.");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[1]["content"][1]["input"]["q"], 1);
        assert_eq!(m[2]["content"][0]["type"], "tool_result");
        assert_eq!(Dialect::of_path("/v1/messages"), Dialect::Messages);
        assert_eq!(Dialect::of_path("/v1/chat/completions"), Dialect::Chat);
    }

    #[test]
    fn a_responses_history_is_input_items_with_calls_and_their_outputs() {
        let base = br#"{"model":"m","messages":[],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}"#;
        let mut c = Conversation::new(Dialect::Responses, base, &session(), None);
        c.user("Hi");
        let call = ToolCall {
            id: "call_1".into(),
            name: "look".into(),
            arguments: "{}".into(),
        };
        c.answered(&Answer {
            text: "Looking.".into(),
            calls: vec![call.clone()],
            cache: None,
        });
        c.tool_results(&[call], 1);
        let body: Value = serde_json::from_slice(&c.body(Some(32))).unwrap();
        assert!(body.get("messages").is_none() && body.get("stream_options").is_none());
        assert_eq!(
            (
                body["max_output_tokens"].clone(),
                body["max_tokens"].clone()
            ),
            (json!(32), Value::Null)
        );
        assert_eq!(body["tools"][0]["name"], "look");
        let input = body["input"].as_array().unwrap();
        assert_eq!(input[0]["role"], "system");
        assert_eq!(
            input[2],
            json!({"role": "assistant", "content": "Looking."})
        );
        assert_eq!(input[3]["type"], "function_call");
        assert_eq!(
            input[4],
            json!({"type": "function_call_output", "call_id": "call_1", "output": "ok."})
        );
        assert_eq!(Dialect::of_path("/v1/responses"), Dialect::Responses);
    }
}
