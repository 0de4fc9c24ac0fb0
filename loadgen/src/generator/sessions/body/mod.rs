//! A conversation's request bodies, built when each turn is due: the run's body (model,
//! `stream`, `stream_options`, whatever else it sets) with its conversation replaced by the
//! history so far and the turn's new message, in the shape of the target's API.
//!
//! What is common (the preamble, the salt, the order of a turn's messages) is here; how each
//! API writes a message, an answer, tool results, the output cap and cache marks is a [`Form`]
//! in a file of its own: `openai` (chat completions and the Responses API), `anthropic`
//! (messages), `gemini` (`generateContent`) and `bedrock` (Converse). A body is put together
//! from pieces written once (`written`): the next turn's costs the new messages' JSON and a
//! copy, not the whole history serialised again; `history` tells which messages an API that
//! joins a turn to the last changed after they were written.

use bytes::{Bytes, BytesMut};
use serde_json::{Map, Value};

use crate::generator::sessions::answer::{Answer, ToolCall};
use crate::generator::sessions::marks::CacheMarks;
use crate::generator::sessions::{Role, Session};

mod anthropic;
mod bedrock;
mod gemini;
mod history;
mod openai;
mod written;

use history::History;

/// The API whose shape the bodies take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAI chat completions (also Azure's, and what most gateways take).
    Chat,
    /// Anthropic messages.
    Messages,
    /// OpenAI's Responses API (`input` items, function calls and their outputs as items).
    Responses,
    /// Google's Gemini API (`contents` of `parts`, the model in the route).
    Gemini,
    /// AWS Bedrock's Converse API (`messages` of content blocks, the model in the route).
    Bedrock,
}

impl Dialect {
    /// The dialect of a target's route (a path or a whole URL; a query is left out):
    /// Gemini's `…:generateContent` and `…:streamGenerateContent`, Bedrock's
    /// `/model/{id}/converse` and `/converse-stream`, Anthropic's `/v1/messages`, the
    /// Responses API's `/v1/responses`, else chat.
    pub fn of_path(path: &str) -> Dialect {
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        let ends = |suffixes: &[&str]| suffixes.iter().any(|s| path.ends_with(s));
        if ends(&[":generateContent", ":streamGenerateContent"]) {
            Dialect::Gemini
        } else if path.contains("/model/") && ends(&["/converse", "/converse-stream"]) {
            Dialect::Bedrock
        } else if path.ends_with("/messages") {
            Dialect::Messages
        } else if path.ends_with("/responses") {
            Dialect::Responses
        } else {
            Dialect::Chat
        }
    }

    /// True for the APIs whose explicit cache the bodies mark (Anthropic's `cache_control`,
    /// Bedrock's `cachePoint`); the others cache on their own.
    pub fn takes_marks(self) -> bool {
        matches!(self, Dialect::Messages | Dialect::Bedrock)
    }

    fn form(self) -> &'static dyn Form {
        match self {
            Dialect::Chat => &openai::Chat,
            Dialect::Responses => &openai::Responses,
            Dialect::Messages => &anthropic::Messages,
            Dialect::Gemini => &gemini::Gemini,
            Dialect::Bedrock => &bedrock::Bedrock,
        }
    }
}

/// How one API writes a conversation.
trait Form: Sync {
    /// The body's key of the conversation.
    fn key(&self) -> &'static str {
        "messages"
    }

    /// The run's body made this API's (its conversation already taken out): the keys it does
    /// not take removed or renamed, and the session's `model` put in where the body names it.
    fn base(&self, base: &mut Map<String, Value>, model: Option<&str>);

    /// The session's tools (an OpenAI `tools` array) put in the body.
    fn tools(&self, tools: &Value, base: &mut Map<String, Value>);

    /// The body's key of the system prompt, or `None` when it stays a message (OpenAI's).
    fn system_key(&self) -> Option<&'static str> {
        None
    }

    /// The system prompt as the value of [`Form::system_key`].
    fn system(&self, text: &str) -> Value {
        text.into()
    }

    /// A message of `role` saying `text`.
    fn message(&self, role: Role, text: &str) -> Value;

    /// Adds a message to the history.
    fn push(&self, messages: &mut History, message: Value) {
        messages.push(message);
    }

    /// Adds the upstream's answer as the client resends it.
    fn answered(&self, answer: &Answer, messages: &mut History);

    /// Adds `result` as the result of each of `calls`.
    fn tool_results(&self, calls: &[ToolCall], result: &str, messages: &mut History);

    /// Asks for `n` output tokens.
    fn max_tokens(&self, body: &mut Map<String, Value>, n: u32);

    /// Puts `marks` in a body about to be sent (an API with an explicit cache): in the body's
    /// fields (its system prompt, its tools) and in the last of `messages`, never another.
    fn mark(&self, _marks: CacheMarks, _body: &mut Map<String, Value>, _messages: &mut [Value]) {}

    /// Takes the mark [`Form::mark`] put in the last of `messages` back out, leaving it as it
    /// was before.
    fn unmark(&self, _messages: &mut [Value]) {}
}

/// How a conversation's bodies are written: the API's shape, and where an explicit cache is
/// marked (Anthropic's and Bedrock's; other APIs' bodies carry no marks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub dialect: Dialect,
    pub marks: CacheMarks,
}

impl Shape {
    /// `dialect`'s bodies with the default marks.
    pub fn of(dialect: Dialect) -> Shape {
        Shape {
            dialect,
            marks: CacheMarks::DEFAULT,
        }
    }
}

/// One session's history, and the body of its next request.
#[derive(Debug, Clone)]
pub struct Conversation {
    dialect: Dialect,
    marks: CacheMarks,
    /// The run's body without its messages.
    base: Map<String, Value>,
    messages: History,
    /// Not yet put before a message.
    salt: Option<String>,
    /// The messages' JSON, written once each.
    written: written::Messages,
    /// The other fields' JSON, for the last output cap asked for.
    frame: Option<written::Frame>,
    /// The last message's JSON with its cache mark, for the last body (an API that takes
    /// marks).
    marked: Vec<u8>,
    /// Where bodies are written.
    buffer: BytesMut,
}

/// A request's body, and its prompt's size by the 4-bytes-a-token estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub bytes: Bytes,
    pub prompt_tokens: u32,
}

impl Conversation {
    /// A conversation of `session` on `base_body` (the run's request body, a JSON object),
    /// `salt` before its first message.
    pub fn new(
        shape: Shape,
        base_body: &[u8],
        session: &Session,
        salt: Option<&str>,
    ) -> Conversation {
        let form = shape.dialect.form();
        let mut base = match serde_json::from_slice::<Value>(base_body) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        base.remove("messages");
        base.remove("input");
        form.base(&mut base, session.model.as_deref());
        if let Some(tools) = &session.tools {
            form.tools(tools, &mut base);
        }
        let mut messages = History::default();
        let mut system = Vec::new();
        for m in &session.preamble {
            match (form.system_key(), m.role) {
                (Some(_), Role::System) => system.push(m.content.as_str()),
                _ => form.push(&mut messages, form.message(m.role, &m.content)),
            }
        }
        let mut conversation = Conversation {
            dialect: shape.dialect,
            marks: shape.marks,
            base,
            messages,
            salt: salt.map(str::to_string),
            written: written::Messages::default(),
            frame: None,
            marked: Vec::new(),
            buffer: BytesMut::new(),
        };
        match form.system_key() {
            Some(key) if !system.is_empty() => {
                let system = conversation.salted(system.join("\n\n"));
                conversation.base.insert(key.into(), form.system(&system));
            }
            _ => conversation.salt_first_message(),
        }
        conversation
    }

    /// Puts the salt before the first message's text, when there is a message.
    fn salt_first_message(&mut self) {
        let Some(first) = self.messages.first_mut() else {
            return;
        };
        let salt = self.salt.take().unwrap_or_default();
        let at = ["/content/0/text", "/parts/0/text", "/content"]
            .into_iter()
            .find(|at| first.pointer(at).is_some_and(Value::is_string));
        if let Some(text) = at.and_then(|at| first.pointer_mut(at)) {
            *text = format!("{salt}{}", text.as_str().unwrap_or_default()).into();
        }
    }

    /// `text` after the salt, which goes before the first message only.
    fn salted(&mut self, text: String) -> String {
        match self.salt.take() {
            Some(salt) => salt + &text,
            None => text,
        }
    }

    /// Changes the history with `change`, which may add messages and change the last one
    /// (an API whose turns alternate joins a message to the last); a message it changed is
    /// written again when next sent, one it did not is not.
    fn change(&mut self, change: impl FnOnce(&'static dyn Form, &mut History)) {
        change(self.dialect.form(), &mut self.messages);
        self.written.forget_from(self.messages.changed_from());
    }

    /// Adds the user's new message.
    pub fn user(&mut self, text: &str) {
        let text = self.salted(text.to_string());
        self.change(|form, messages| form.push(messages, form.message(Role::User, &text)));
    }

    /// Adds the upstream's answer as the client resends it: its text byte for byte, its tool
    /// calls as they came.
    pub fn answered(&mut self, answer: &Answer) {
        self.change(|form, messages| form.answered(answer, messages));
    }

    /// Adds a result of `tokens` tokens for each of `calls`, as an agent loop sends them back.
    pub fn tool_results(&mut self, calls: &[ToolCall], tokens: u32) {
        let result = tool_result_text(tokens);
        self.change(|form, messages| form.tool_results(calls, &result, messages));
    }

    /// The body of the next request, asking for `max_tokens` when given: the fields written
    /// for that cap, the messages written so far and the new ones written now. When the API
    /// takes marks, the last one is written with its cache mark for this body only, and
    /// written plain once a later message follows it.
    pub fn body(&mut self, max_tokens: Option<u32>) -> Body {
        let form = self.dialect.form();
        if self.frame.as_ref().map(|f| f.max_tokens) != Some(max_tokens) {
            let mut fields = self.base.clone();
            if let Some(n) = max_tokens {
                form.max_tokens(&mut fields, n);
            }
            form.mark(self.marks, &mut fields, &mut []);
            self.frame = Some(written::Frame::new(max_tokens, &fields, form.key()));
        }
        // Invariant: made just above when it was missing.
        let frame = self.frame.as_ref().expect("a frame");
        let n = self.messages.len();
        let marks_last = n > 0 && self.dialect.takes_marks() && self.marks.marks_history();
        if !marks_last {
            self.written.catch_up(&self.messages);
            let (all, text) = self.written.first(n);
            let bytes = frame.body(&[all], &mut self.buffer);
            return Body {
                bytes,
                prompt_tokens: crate::generator::corpus::tokens_of_text(text + frame.text_bytes()),
            };
        }
        // The last message is written with its mark, in place: marked, written, and the mark
        // taken back. Unmarked, it is written once it is no longer the last.
        self.written.catch_up(&self.messages[..n - 1]);
        let last = &mut self.messages.as_mut_slice()[n - 1..];
        form.mark(self.marks, &mut Map::new(), last);
        self.marked.clear();
        written::write(&mut self.marked, &last[0]);
        let last_text = crate::generator::corpus::text_bytes(&last[0]);
        form.unmark(last);
        let (before, text) = self.written.first(n - 1);
        let bytes = frame.body(&[before, &self.marked], &mut self.buffer);
        let text = text + last_text;
        Body {
            bytes,
            prompt_tokens: crate::generator::corpus::tokens_of_text(text + frame.text_bytes()),
        }
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

/// Each function of an OpenAI `tools` array (its `function` object, or the entry itself when
/// it has none), in `shape`'s form.
fn tools_as(tools: &Value, shape: fn(&Value) -> Value) -> Vec<Value> {
    let each = tools.as_array().into_iter().flatten();
    each.map(|t| shape(t.get("function").unwrap_or(t)))
        .collect()
}

/// A JSON object of `fields`, each value moved in as it is: `json!` serialises a value given
/// as an expression again, a deep copy of what was just built.
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// A function's name, or `tool` when it has none.
fn tool_name(f: &Value) -> Value {
    f.get("name").cloned().unwrap_or_else(|| "tool".into())
}

/// `out` with the function's `description`, when it has one.
fn described(mut out: Value, f: &Value) -> Value {
    if let Some(d) = f.get("description") {
        out["description"] = d.clone();
    }
    out
}

/// A function's parameters (or Anthropic's `input_schema`), or an empty object's schema.
fn tool_schema(f: &Value) -> Value {
    f.get("parameters")
        .or_else(|| f.get("input_schema"))
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"type": "object"}))
}

/// A tool call's arguments as the JSON object an API that takes them so wants (`{}` when
/// they are not one).
fn arguments_object(call: &ToolCall) -> Value {
    serde_json::from_str::<Value>(&call.arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}))
}

/// Adds `message` to the history, its `blocks` (the key of its parts) joined to the last
/// message's when both are of one role: APIs that want turns to alternate (Bedrock's) see a
/// turn's tool results and the next user message as one user message, as a client sends them.
fn push_joined(messages: &mut History, mut message: Value, blocks: &str) {
    let joins = messages.last().is_some_and(|last| {
        let role = last.get("role");
        role.is_some() && role == message.get("role") && last[blocks].is_array()
    });
    if let Some(new) = message.get_mut(blocks).and_then(Value::as_array_mut) {
        if joins {
            // Invariant: the last one is there and holds an array of blocks, as just seen.
            let last = messages.last_mut().expect("a last message");
            let old = last[blocks].as_array_mut().expect("blocks");
            old.append(new);
            return;
        }
    }
    messages.push(message);
}

/// The last element of an array, as an object, when there is one.
fn last_object(value: Option<&mut Value>) -> Option<&mut Map<String, Value>> {
    value
        .and_then(Value::as_array_mut)
        .and_then(|items| items.last_mut())
        .and_then(Value::as_object_mut)
}

/// A tool's result of `tokens` tokens by the 4-bytes-a-token estimate, the same every time.
pub fn tool_result_text(tokens: u32) -> String {
    "ok. ".repeat(tokens.max(1) as usize).trim_end().to_string()
}

#[cfg(test)]
mod tests;
