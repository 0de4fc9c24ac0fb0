//! Anthropic messages: the system prompt in `system`, every content as blocks, tool calls as
//! `tool_use` blocks and their results as a user message of `tool_result` blocks, and
//! `cache_control` where [`CacheMarks`] places it.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, last_object, object, tool_name, tool_schema, tools_as, Form, History,
};
use crate::generator::sessions::answer::{Answer, ToolCall};
use crate::generator::sessions::marks::CacheMarks;
use crate::generator::sessions::Role;

/// Anthropic messages.
pub(super) struct Messages;

impl Form for Messages {
    fn base(&self, base: &mut Map<String, Value>, model: Option<&str>) {
        // Chat's; Anthropic's API takes no such field.
        base.remove("stream_options");
        if let Some(model) = model {
            base.insert("model".into(), model.into());
        }
    }

    fn tools(&self, tools: &Value, base: &mut Map<String, Value>) {
        base.insert("tools".into(), Value::Array(tools_as(tools, tool)));
    }

    fn system_key(&self) -> Option<&'static str> {
        Some("system")
    }

    fn system(&self, text: &str) -> Value {
        Value::Array(vec![text_block(text)])
    }

    fn message(&self, role: Role, text: &str) -> Value {
        blocks_message(role.as_str(), vec![text_block(text)])
    }

    fn answered(&self, answer: &Answer, messages: &mut History) {
        let mut blocks = Vec::new();
        if !answer.text.is_empty() {
            blocks.push(text_block(&answer.text));
        }
        for call in &answer.calls {
            blocks.push(object([
                ("type", "tool_use".into()),
                ("id", call.id.as_str().into()),
                ("name", call.name.as_str().into()),
                ("input", arguments_object(call)),
            ]));
        }
        messages.push(blocks_message("assistant", blocks));
    }

    fn tool_results(&self, calls: &[ToolCall], result: &str, messages: &mut History) {
        let blocks: Vec<Value> = calls
            .iter()
            .map(|c| json!({"type": "tool_result", "tool_use_id": c.id, "content": result}))
            .collect();
        messages.push(blocks_message("user", blocks));
    }

    fn max_tokens(&self, body: &mut Map<String, Value>, n: u32) {
        body.insert("max_tokens".into(), n.into());
    }

    /// `cache_control` on the system prompt's block (or the last tool) and on the newest
    /// message's last block, as the marks place them; earlier turns' marks are gone, as a
    /// client moves its breakpoint forward.
    fn mark(&self, marks: CacheMarks, body: &mut Map<String, Value>, messages: &mut [Value]) {
        let control = if marks.one_hour {
            json!({"type": "ephemeral", "ttl": "1h"})
        } else {
            json!({"type": "ephemeral"})
        };
        let put = |block: Option<&mut Map<String, Value>>| match block {
            Some(block) => {
                block.insert("cache_control".into(), control.clone());
                true
            }
            None => false,
        };
        if marks.marks_system() && !put(last_object(body.get_mut("system"))) {
            put(last_object(body.get_mut("tools")));
        }
        if marks.marks_history() {
            put(last_object(
                messages.last_mut().and_then(|m| m.get_mut("content")),
            ));
        }
    }

    fn unmark(&self, messages: &mut [Value]) {
        let content = messages.last_mut().and_then(|m| m.get_mut("content"));
        if let Some(block) = last_object(content) {
            block.remove("cache_control");
        }
    }
}

/// A function in Anthropic's form (`name`, `description`, `input_schema`).
fn tool(f: &Value) -> Value {
    json!({
        "name": tool_name(f),
        "description": f.get("description").cloned().unwrap_or_else(|| "".into()),
        "input_schema": tool_schema(f),
    })
}

/// A message of `role` holding `blocks`.
fn blocks_message(role: &str, blocks: Vec<Value>) -> Value {
    object([("role", role.into()), ("content", Value::Array(blocks))])
}

/// An Anthropic text block.
fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{parsed, session, two_turns};
    use super::super::{Conversation, Dialect, Shape};
    use crate::generator::sessions::answer::{Answer, ToolCall};
    use crate::generator::sessions::Session;

    #[test]
    fn an_anthropic_history_puts_the_system_prompt_and_tool_use_in_their_places() {
        let mut c = Conversation::new(
            Shape::of(Dialect::Messages),
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
                ..ToolCall::default()
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
        assert_eq!(body["system"][0]["text"], "Be brief.");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[0]["content"], json!([{"type": "text", "text": "Hi"}]));
        assert_eq!(m[1]["content"][1]["input"]["q"], 1);
        assert_eq!(m[2]["content"][0]["type"], "tool_result");
    }

    #[test]
    fn anthropic_breakpoints_end_the_system_prompt_and_move_with_the_newest_message() {
        let marked = |marks: &str, session: &Session| {
            let shape = Shape {
                dialect: Dialect::Messages,
                marks: marks.parse().unwrap(),
            };
            parsed(&two_turns(shape, session))
        };
        let control = json!({"type": "ephemeral"});
        let body = marked("history", &session());
        assert_eq!(body["system"][0]["cache_control"], control);
        assert!(body["tools"][0].get("cache_control").is_none());
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[2]["content"][0]["cache_control"], control, "the newest");
        assert!(
            m[0]["content"][0].get("cache_control").is_none(),
            "moved on"
        );
        assert!(m[1]["content"][0].get("cache_control").is_none());

        let body = marked("system:1h", &session());
        assert_eq!(body["system"][0]["cache_control"]["ttl"], "1h");
        assert!(body["messages"][2]["content"][0]
            .get("cache_control")
            .is_none());

        let mut bare = session();
        bare.preamble.clear();
        let body = marked("system", &bare);
        assert_eq!(
            body["tools"][0]["cache_control"], control,
            "no system: the tools"
        );

        let body = marked("none", &session());
        assert!(!String::from_utf8(serde_json::to_vec(&body).unwrap())
            .unwrap()
            .contains("cache_control"));
    }
}
