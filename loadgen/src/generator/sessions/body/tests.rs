//! Conversations' bodies in every API's shape: salts, and bodies put together from pieces
//! that are the bytes of the whole body serialised.

use serde_json::{json, Value};

use super::*;
use crate::generator::sessions::marks::Place;
use crate::generator::sessions::{Message, Turn};

/// A session of one system prompt, one tool and one turn of one tool round.
pub(super) fn session() -> Session {
    Session {
        id: "s".into(),
        preamble: vec![Message {
            role: Role::System,
            content: "Be brief.".into(),
        }],
        tools: Some(std::sync::Arc::new(json!([{"type": "function",
            "function": {"name": "look", "description": "Looks.",
            "parameters": {"type": "object"}}}]))),
        model: None,
        turns: vec![Turn {
            user: "Hi".into(),
            think_us: None,
            max_tokens: None,
            tool_rounds: 1,
            tool_result_tokens: 2,
        }],
        branches: Vec::new(),
    }
}

/// The body asking for 8 tokens, parsed.
pub(super) fn parsed(c: &Conversation) -> Value {
    serde_json::from_slice(&c.clone().body(Some(8)).bytes).unwrap()
}

/// A conversation of `session` in `dialect` on the chat scenario's streamed body: one user
/// message, answered `first`, then the user's `two`.
pub(super) fn two_turns(shape: Shape, session: &Session) -> Conversation {
    let base = br#"{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":4,
        "stream":true,"stream_options":{"include_usage":true}}"#;
    let mut c = Conversation::new(shape, base, session, None);
    c.user("one");
    c.answered(&Answer {
        text: "first".into(),
        ..Answer::default()
    });
    c.user("two");
    c
}

/// One tool round on `c`: an answer of `text` calling `look` as `id` with `arguments`,
/// then its result of `tokens` tokens.
pub(super) fn tool_round(
    c: &mut Conversation,
    text: &str,
    (id, arguments): (&str, &str),
    tokens: u32,
) {
    let call = ToolCall {
        id: id.into(),
        name: "look".into(),
        arguments: arguments.into(),
        ..ToolCall::default()
    };
    c.answered(&Answer {
        text: text.into(),
        calls: vec![call.clone()],
        cache: None,
    });
    c.tool_results(&[call], tokens);
}

#[test]
fn routes_name_their_dialect() {
    for (path, dialect) in [
        ("/v1/chat/completions", Dialect::Chat),
        (
            "/openai/deployments/d/chat/completions?api-version=1",
            Dialect::Chat,
        ),
        ("/v1/messages", Dialect::Messages),
        ("http://h:1/v1/messages?beta=true", Dialect::Messages),
        ("/v1/responses", Dialect::Responses),
        (
            "/v1beta/models/gemini-2.0-flash:generateContent",
            Dialect::Gemini,
        ),
        (
            "http://h:1/v1/models/g:streamGenerateContent?alt=sse",
            Dialect::Gemini,
        ),
        ("/model/anthropic.claude-v2:1/converse", Dialect::Bedrock),
        (
            "/model/amazon.nova-lite-v1%3A0/converse-stream",
            Dialect::Bedrock,
        ),
    ] {
        assert_eq!(Dialect::of_path(path), dialect, "{path}");
    }
    assert!(Dialect::Bedrock.takes_marks() && Dialect::Messages.takes_marks());
    assert!(!Dialect::Gemini.takes_marks() && !Dialect::Chat.takes_marks());
}

#[test]
fn the_salt_goes_before_the_first_text_in_every_dialect() {
    let mut bare = session();
    bare.preamble = vec![Message {
        role: Role::User,
        content: "context".into(),
    }];
    for dialect in [
        Dialect::Chat,
        Dialect::Responses,
        Dialect::Messages,
        Dialect::Gemini,
        Dialect::Bedrock,
    ] {
        let mut c = Conversation::new(Shape::of(dialect), b"{}", &bare, Some("[s] "));
        c.user("Hi");
        let text = String::from_utf8(c.body(None).bytes.to_vec()).unwrap();
        assert!(text.contains("[s] context"), "{dialect:?}: {text}");
        assert_eq!(text.matches("[s] ").count(), 1, "{dialect:?}: {text}");
    }
}

/// The body of `c`'s next request serialised whole, as [`Conversation::body`] must write it
/// byte for byte: the run's fields, the cap, the marks, and every message.
fn whole(c: &Conversation, max_tokens: Option<u32>) -> Body {
    let form = c.dialect.form();
    let mut body = c.base.clone();
    if let Some(n) = max_tokens {
        form.max_tokens(&mut body, n);
    }
    let mut messages = c.messages.to_vec();
    form.mark(c.marks, &mut body, &mut messages);
    body.insert(form.key().into(), Value::Array(messages));
    Body {
        bytes: serde_json::to_vec(&body).unwrap().into(),
        prompt_tokens: crate::generator::corpus::prompt_tokens(&body),
    }
}

#[test]
fn a_body_from_pieces_is_the_whole_body_in_every_shape_after_every_step() {
    let dialects = [
        Dialect::Chat,
        Dialect::Responses,
        Dialect::Messages,
        Dialect::Gemini,
        Dialect::Bedrock,
    ];
    let places = [Place::None, Place::System, Place::History];
    let mut bare = session();
    bare.tools = None;
    bare.preamble.push(Message {
        role: Role::User,
        content: "context \"quoted\" \u{e9}".into(),
    });
    let base = br#"{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":4,
        "stream":true,"stream_options":{"include_usage":true},"temperature":0.5}"#;
    let mut checked = 0;
    for dialect in dialects {
        for place in places {
            for one_hour in [false, true] {
                for (session, salt) in [(session(), None), (bare.clone(), Some("[s] "))] {
                    let marks = CacheMarks { place, one_hour };
                    let shape = Shape { dialect, marks };
                    let mut c = Conversation::new(shape, base, &session, salt);
                    let mut same = |c: &mut Conversation, max_tokens| {
                        let want = whole(c, max_tokens);
                        let got = c.body(max_tokens);
                        assert_eq!(
                            String::from_utf8(got.bytes.to_vec()).unwrap(),
                            String::from_utf8(want.bytes.to_vec()).unwrap(),
                            "{dialect:?} {marks} {max_tokens:?}"
                        );
                        assert_eq!(got.prompt_tokens, want.prompt_tokens);
                        checked += 1;
                    };
                    same(&mut c, None);
                    c.user("one");
                    same(&mut c, Some(8));
                    c.answered(&Answer {
                        text: "first".into(),
                        ..Answer::default()
                    });
                    c.user("two");
                    same(&mut c, Some(8));
                    // A round of two calls, then the results; then a user message joining them
                    // (Bedrock's and Gemini's turns alternate: it changes the last message).
                    let calls: Vec<ToolCall> = ["a", "b"]
                        .map(|id| ToolCall {
                            id: id.into(),
                            name: "look".into(),
                            arguments: r#"{"q":1}"#.into(),
                            ..ToolCall::default()
                        })
                        .to_vec();
                    c.answered(&Answer {
                        text: String::new(),
                        calls: calls.clone(),
                        cache: None,
                    });
                    same(&mut c, Some(16));
                    c.tool_results(&calls, 3);
                    same(&mut c, Some(16));
                    c.user("three");
                    same(&mut c, None);
                    same(&mut c, Some(8));
                }
            }
        }
    }
    assert_eq!(checked, 5 * 3 * 2 * 2 * 7);
}
