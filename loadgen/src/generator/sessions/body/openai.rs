//! OpenAI's shapes: chat completions (`messages`, tool calls in the assistant message, results
//! as `tool` messages) and the Responses API (`input` items: assistant answers as messages,
//! tool calls as `function_call` items and results as `function_call_output` items).

use serde_json::{json, Map, Value};

use super::{described, object, tool_name, tool_schema, tools_as, Form, History};
use crate::generator::sessions::answer::{Answer, ToolCall};
use crate::generator::sessions::Role;

/// OpenAI chat completions.
pub(super) struct Chat;

/// OpenAI's Responses API.
pub(super) struct Responses;

/// The session's model, where it names one.
fn put_model(base: &mut Map<String, Value>, model: Option<&str>) {
    if let Some(model) = model {
        base.insert("model".into(), model.into());
    }
}

fn message(role: Role, text: &str) -> Value {
    json!({"role": role.as_str(), "content": text})
}

impl Form for Chat {
    fn base(&self, base: &mut Map<String, Value>, model: Option<&str>) {
        put_model(base, model);
    }

    fn tools(&self, tools: &Value, base: &mut Map<String, Value>) {
        base.insert("tools".into(), tools.clone());
    }

    fn message(&self, role: Role, text: &str) -> Value {
        message(role, text)
    }

    fn answered(&self, answer: &Answer, messages: &mut History) {
        if answer.calls.is_empty() {
            messages.push(json!({"role": "assistant", "content": answer.text}));
            return;
        }
        let calls: Vec<Value> = answer
            .calls
            .iter()
            .map(|call| {
                json!({"id": call.id, "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments}})
            })
            .collect();
        let content = if answer.text.is_empty() {
            Value::Null
        } else {
            answer.text.clone().into()
        };
        messages.push(object([
            ("role", "assistant".into()),
            ("content", content),
            ("tool_calls", Value::Array(calls)),
        ]));
    }

    fn tool_results(&self, calls: &[ToolCall], result: &str, messages: &mut History) {
        for call in calls {
            messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": result}));
        }
    }

    fn max_tokens(&self, body: &mut Map<String, Value>, n: u32) {
        let key = if body.contains_key("max_completion_tokens") {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), n.into());
    }
}

impl Form for Responses {
    fn key(&self) -> &'static str {
        "input"
    }

    fn base(&self, base: &mut Map<String, Value>, model: Option<&str>) {
        // Chat's; the Responses API takes no such field.
        base.remove("stream_options");
        if let Some(n) = base.remove("max_tokens") {
            base.insert("max_output_tokens".into(), n);
        }
        put_model(base, model);
    }

    fn tools(&self, tools: &Value, base: &mut Map<String, Value>) {
        base.insert("tools".into(), Value::Array(tools_as(tools, tool)));
    }

    fn message(&self, role: Role, text: &str) -> Value {
        message(role, text)
    }

    fn answered(&self, answer: &Answer, messages: &mut History) {
        if !answer.text.is_empty() {
            messages.push(json!({"role": "assistant", "content": answer.text}));
        }
        for call in &answer.calls {
            messages.push(json!({"type": "function_call", "call_id": call.id,
                "name": call.name, "arguments": call.arguments}));
        }
    }

    fn tool_results(&self, calls: &[ToolCall], result: &str, messages: &mut History) {
        for call in calls {
            messages.push(json!({"type": "function_call_output",
                "call_id": call.id, "output": result}));
        }
    }

    fn max_tokens(&self, body: &mut Map<String, Value>, n: u32) {
        body.insert("max_output_tokens".into(), n.into());
    }
}

/// A function in the Responses API's form (its fields at the top of the tool).
fn tool(f: &Value) -> Value {
    described(
        json!({"type": "function", "name": tool_name(f), "parameters": tool_schema(f)}),
        f,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::tests::{parsed, session, tool_round};
    use super::super::{Conversation, Dialect, Shape};

    #[test]
    fn a_chat_history_holds_the_answers_and_the_tool_results() {
        let base = br#"{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":4}"#;
        let mut c = Conversation::new(Shape::of(Dialect::Chat), base, &session(), Some("[s] "));
        c.user("Hi");
        tool_round(&mut c, "", ("call_1", "{\"input\":\"a\"}"), 2);
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
    fn a_responses_history_is_input_items_with_calls_and_their_outputs() {
        let base = br#"{"model":"m","messages":[],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}"#;
        let mut c = Conversation::new(Shape::of(Dialect::Responses), base, &session(), None);
        c.user("Hi");
        tool_round(&mut c, "Looking.", ("call_1", "{}"), 1);
        let body: Value = serde_json::from_slice(&c.body(Some(32)).bytes).unwrap();
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
    }
}
