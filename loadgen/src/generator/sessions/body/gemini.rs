//! Google's Gemini API (`generateContent`): the history as `contents` of `parts` (roles `user`
//! and `model`), the system prompt in `systemInstruction`, tools as `functionDeclarations`, a
//! tool call as a model part of `functionCall` and its result as a user part of
//! `functionResponse`, the output cap in `generationConfig.maxOutputTokens`. The model and
//! whether the answer streams are the route's, so the body names neither. Gemini caches on its
//! own (its implicit cache): the bodies carry no marks.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, described, object, push_joined, tool_name, tool_schema, tools_as, Form,
    History,
};
use crate::generator::sessions::answer::{Answer, ToolCall};
use crate::generator::sessions::Role;

/// Google's Gemini API.
pub(super) struct Gemini;

impl Form for Gemini {
    fn key(&self) -> &'static str {
        "contents"
    }

    fn base(&self, base: &mut Map<String, Value>, _model: Option<&str>) {
        for key in ["model", "stream", "stream_options"] {
            base.remove(key);
        }
        let cap = base.remove("max_tokens");
        if let Some(n) = base.remove("max_completion_tokens").or(cap) {
            config(base).insert("maxOutputTokens".into(), n);
        }
    }

    fn tools(&self, tools: &Value, base: &mut Map<String, Value>) {
        let declarations = tools_as(tools, declaration);
        base.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }

    fn system_key(&self) -> Option<&'static str> {
        Some("systemInstruction")
    }

    fn system(&self, text: &str) -> Value {
        json!({"parts": [{"text": text}]})
    }

    fn message(&self, role: Role, text: &str) -> Value {
        let role = match role {
            Role::Assistant => "model",
            Role::User | Role::System => "user",
        };
        json!({"role": role, "parts": [{"text": text}]})
    }

    fn push(&self, messages: &mut History, message: Value) {
        push_joined(messages, message, "parts");
    }

    fn answered(&self, answer: &Answer, messages: &mut History) {
        let mut parts = Vec::new();
        if !answer.text.is_empty() || answer.calls.is_empty() {
            parts.push(json!({"text": answer.text}));
        }
        for call in &answer.calls {
            let mut function = object([
                ("name", call.name.as_str().into()),
                ("args", arguments_object(call)),
            ]);
            put_id(&mut function, call);
            parts.push(object([("functionCall", function)]));
        }
        self.push(messages, parts_message("model", parts));
    }

    /// Each result names its function (Gemini pairs them by name, and by id when the call
    /// had one).
    fn tool_results(&self, calls: &[ToolCall], result: &str, messages: &mut History) {
        let parts: Vec<Value> = calls
            .iter()
            .map(|call| {
                let mut response = json!({"name": call.name, "response": {"output": result}});
                put_id(&mut response, call);
                object([("functionResponse", response)])
            })
            .collect();
        self.push(messages, parts_message("user", parts));
    }

    fn max_tokens(&self, body: &mut Map<String, Value>, n: u32) {
        config(body).insert("maxOutputTokens".into(), n.into());
    }
}

/// A turn of `role` holding `parts`.
fn parts_message(role: &str, parts: Vec<Value>) -> Value {
    object([("role", role.into()), ("parts", Value::Array(parts))])
}

/// The call's id, when the answer gave it (one made to pair a call is not resent).
fn put_id(part: &mut Value, call: &ToolCall) {
    if !call.id_made {
        part["id"] = call.id.clone().into();
    }
}

/// The body's `generationConfig`, made when it has none.
fn config(body: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let config = body.entry("generationConfig").or_insert_with(|| json!({}));
    if !config.is_object() {
        *config = json!({});
    }
    // Invariant: just made an object if it was not one.
    config.as_object_mut().expect("an object")
}

/// A function as a Gemini declaration (`name`, `description` when given, `parameters`).
fn declaration(f: &Value) -> Value {
    described(
        json!({"name": tool_name(f), "parameters": tool_schema(f)}),
        f,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{parsed, session, two_turns};
    use super::super::{Conversation, Dialect, Shape};
    use crate::generator::sessions::answer::{Answer, ToolCall};

    #[test]
    fn a_gemini_history_is_contents_of_parts_without_the_chat_keys() {
        let body = parsed(&two_turns(Shape::of(Dialect::Gemini), &session()));
        for key in [
            "model",
            "stream",
            "stream_options",
            "messages",
            "max_tokens",
        ] {
            assert!(body.get(key).is_none(), "{key}: {body}");
        }
        assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 8}));
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        assert_eq!(
            body["tools"],
            json!([{"functionDeclarations": [{"name": "look", "description": "Looks.",
                "parameters": {"type": "object"}}]}])
        );
        assert_eq!(
            body["contents"],
            json!([{"role": "user", "parts": [{"text": "one"}]},
                {"role": "model", "parts": [{"text": "first"}]},
                {"role": "user", "parts": [{"text": "two"}]}])
        );
        let mut whole = Conversation::new(
            Shape::of(Dialect::Gemini),
            br#"{"model":"m","max_tokens":4}"#,
            &session(),
            None,
        );
        let body: serde_json::Value = serde_json::from_slice(&whole.body(None).bytes).unwrap();
        assert_eq!(
            body["generationConfig"]["maxOutputTokens"], 4,
            "the run's cap"
        );
    }

    #[test]
    fn a_gemini_tool_round_sends_a_function_response_by_name() {
        let mut c = Conversation::new(Shape::of(Dialect::Gemini), b"{}", &session(), None);
        c.user("Hi");
        let made = ToolCall {
            id: "call_0".into(),
            name: "look".into(),
            arguments: "{\"q\":1}".into(),
            id_made: true,
        };
        let given = ToolCall {
            id: "abc".into(),
            name: "look".into(),
            arguments: "{}".into(),
            id_made: false,
        };
        c.answered(&Answer {
            text: String::new(),
            calls: vec![made.clone(), given.clone()],
            cache: None,
        });
        c.tool_results(&[made, given], 1);
        c.user("Thanks");
        let contents = parsed(&c)["contents"].clone();
        assert_eq!(
            contents[1],
            json!({"role": "model", "parts": [
                {"functionCall": {"name": "look", "args": {"q": 1}}},
                {"functionCall": {"name": "look", "args": {}, "id": "abc"}}]}),
            "no text part, and only a given id"
        );
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "look", "response": {"output": "ok."}}},
                {"functionResponse": {"name": "look", "response": {"output": "ok."}, "id": "abc"}},
                {"text": "Thanks"}]}),
            "the results and the next message in one user turn"
        );
        assert_eq!(contents.as_array().unwrap().len(), 3);
    }
}
