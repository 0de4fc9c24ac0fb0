//! AWS Bedrock's Converse API: `messages` of content blocks (`{"text"}`), the system prompt in
//! `system`, tools in `toolConfig.tools` as `toolSpec`s, a tool call as a `toolUse` block and
//! its result as a user message of `toolResult` blocks, the output cap in
//! `inferenceConfig.maxTokens`, and `cachePoint` blocks where [`CacheMarks`] places them. The
//! model and whether the answer streams are the route's, so the body names neither. Converse
//! wants the roles to alternate: a message of the role of the one before joins it.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, object, push_joined, tool_name, tool_schema, tools_as, Form, History,
};
use crate::generator::sessions::answer::{Answer, ToolCall};
use crate::generator::sessions::marks::CacheMarks;
use crate::generator::sessions::Role;

/// AWS Bedrock's Converse API.
pub(super) struct Bedrock;

impl Form for Bedrock {
    fn base(&self, base: &mut Map<String, Value>, _model: Option<&str>) {
        for key in ["model", "stream", "stream_options"] {
            base.remove(key);
        }
        let cap = base.remove("max_tokens");
        if let Some(n) = base.remove("max_completion_tokens").or(cap) {
            inference(base).insert("maxTokens".into(), n);
        }
    }

    fn tools(&self, tools: &Value, base: &mut Map<String, Value>) {
        let specs = tools_as(tools, spec);
        base.insert("toolConfig".into(), json!({"tools": specs}));
    }

    fn system_key(&self) -> Option<&'static str> {
        Some("system")
    }

    fn system(&self, text: &str) -> Value {
        json!([{"text": text}])
    }

    fn message(&self, role: Role, text: &str) -> Value {
        let role = match role {
            Role::Assistant => "assistant",
            Role::User | Role::System => "user",
        };
        json!({"role": role, "content": [{"text": text}]})
    }

    fn push(&self, messages: &mut History, message: Value) {
        push_joined(messages, message, "content");
    }

    fn answered(&self, answer: &Answer, messages: &mut History) {
        let mut blocks = Vec::new();
        if !answer.text.is_empty() || answer.calls.is_empty() {
            blocks.push(json!({"text": answer.text}));
        }
        for call in &answer.calls {
            let call = object([
                ("toolUseId", call.id.as_str().into()),
                ("name", call.name.as_str().into()),
                ("input", arguments_object(call)),
            ]);
            blocks.push(object([("toolUse", call)]));
        }
        self.push(messages, blocks_message("assistant", blocks));
    }

    fn tool_results(&self, calls: &[ToolCall], result: &str, messages: &mut History) {
        let blocks: Vec<Value> = calls
            .iter()
            .map(|c| json!({"toolResult": {"toolUseId": c.id, "content": [{"text": result}]}}))
            .collect();
        self.push(messages, blocks_message("user", blocks));
    }

    fn max_tokens(&self, body: &mut Map<String, Value>, n: u32) {
        inference(body).insert("maxTokens".into(), n.into());
    }

    /// A `cachePoint` block after the system prompt (or after the last tool when there is no
    /// system prompt), and after the newest message's content, as the marks place them; the
    /// same places Anthropic's `cache_control` goes.
    fn mark(&self, marks: CacheMarks, body: &mut Map<String, Value>, messages: &mut [Value]) {
        let point = if marks.one_hour {
            json!({"cachePoint": {"type": "default", "ttl": "1h"}})
        } else {
            json!({"cachePoint": {"type": "default"}})
        };
        let put = |blocks: Option<&mut Value>| match blocks.and_then(Value::as_array_mut) {
            Some(blocks) if !blocks.is_empty() => {
                blocks.push(point.clone());
                true
            }
            _ => false,
        };
        if marks.marks_system() && !put(body.get_mut("system")) {
            let tools = body.get_mut("toolConfig").and_then(|c| c.get_mut("tools"));
            put(tools);
        }
        if marks.marks_history() {
            put(messages.last_mut().and_then(|m| m.get_mut("content")));
        }
    }

    fn unmark(&self, messages: &mut [Value]) {
        let content = messages.last_mut().and_then(|m| m.get_mut("content"));
        if let Some(blocks) = content.and_then(Value::as_array_mut) {
            if blocks.last().is_some_and(|b| b.get("cachePoint").is_some()) {
                blocks.pop();
            }
        }
    }
}

/// A message of `role` holding content `blocks`.
fn blocks_message(role: &str, blocks: Vec<Value>) -> Value {
    object([("role", role.into()), ("content", Value::Array(blocks))])
}

/// The body's `inferenceConfig`, made when it has none.
fn inference(body: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let config = body.entry("inferenceConfig").or_insert_with(|| json!({}));
    if !config.is_object() {
        *config = json!({});
    }
    // Invariant: just made an object if it was not one.
    config.as_object_mut().expect("an object")
}

/// A function as a Converse `toolSpec` (`description` when given: Bedrock refuses an empty
/// one).
fn spec(f: &Value) -> Value {
    let mut spec = json!({"name": tool_name(f), "inputSchema": {"json": tool_schema(f)}});
    if let Some(d) = f.get("description").filter(|d| d.as_str() != Some("")) {
        spec["description"] = d.clone();
    }
    json!({"toolSpec": spec})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{parsed, session, tool_round, two_turns};
    use super::super::{Conversation, Dialect, Shape};
    use crate::generator::sessions::Session;

    #[test]
    fn a_converse_history_is_content_blocks_without_the_chat_keys() {
        let shape = Shape {
            dialect: Dialect::Bedrock,
            marks: "none".parse().unwrap(),
        };
        let body = parsed(&two_turns(shape, &session()));
        for key in ["model", "stream", "stream_options", "max_tokens"] {
            assert!(body.get(key).is_none(), "{key}: {body}");
        }
        assert_eq!(body["inferenceConfig"], json!({"maxTokens": 8}));
        assert_eq!(body["system"], json!([{"text": "Be brief."}]));
        assert_eq!(
            body["toolConfig"],
            json!({"tools": [{"toolSpec": {"name": "look", "description": "Looks.",
                "inputSchema": {"json": {"type": "object"}}}}]})
        );
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [{"text": "one"}]},
                {"role": "assistant", "content": [{"text": "first"}]},
                {"role": "user", "content": [{"text": "two"}]}])
        );
    }

    #[test]
    fn a_converse_tool_round_pairs_results_by_tool_use_id() {
        let shape = Shape {
            dialect: Dialect::Bedrock,
            marks: "none".parse().unwrap(),
        };
        let mut c = Conversation::new(shape, b"{}", &session(), None);
        c.user("Hi");
        tool_round(&mut c, "Looking.", ("tooluse_1", "{\"q\":1}"), 1);
        c.user("Thanks");
        let m = parsed(&c)["messages"].clone();
        assert_eq!(
            m[1]["content"],
            json!([{"text": "Looking."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "look", "input": {"q": 1}}}])
        );
        assert_eq!(
            m[2],
            json!({"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "ok."}]}},
                {"text": "Thanks"}]}),
            "the roles alternate"
        );
        assert_eq!(m.as_array().unwrap().len(), 3);
    }

    #[test]
    fn cache_points_follow_the_system_prompt_and_move_with_the_newest_message() {
        let marked = |marks: &str, session: &Session| {
            let shape = Shape {
                dialect: Dialect::Bedrock,
                marks: marks.parse().unwrap(),
            };
            parsed(&two_turns(shape, session))
        };
        let point = json!({"cachePoint": {"type": "default"}});
        let body = marked("history", &session());
        assert_eq!(body["system"], json!([{"text": "Be brief."}, point]));
        assert_eq!(body["toolConfig"]["tools"].as_array().unwrap().len(), 1);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(
            m[2]["content"],
            json!([{"text": "two"}, point]),
            "the newest"
        );
        assert_eq!(m[0]["content"], json!([{"text": "one"}]), "moved on");
        assert_eq!(m[1]["content"].as_array().unwrap().len(), 1);

        let body = marked("system:1h", &session());
        assert_eq!(body["system"][1]["cachePoint"]["ttl"], "1h");
        assert_eq!(body["messages"][2]["content"].as_array().unwrap().len(), 1);

        let mut bare = session();
        bare.preamble.clear();
        let body = marked("system", &bare);
        assert_eq!(
            body["toolConfig"]["tools"][1], point,
            "no system: the tools"
        );

        let body = marked("none", &session());
        assert!(!body.to_string().contains("cachePoint"));
    }
}
