//! What a turn's answer said, read back from its body so the next turn can resend it: the text,
//! the tool calls, and the prompt cache as the upstream reported it. Whole bodies and streams
//! (their raw events) of OpenAI's chat completions and Responses and of Anthropic's messages are
//! read here, Gemini's and Bedrock's in files of their own; this is the session path, read once
//! a turn, after its timings were taken.

use serde_json::Value;

use crate::wire::outcome::{CacheUsage, Kept, MOST_CALLS};

mod bedrock;
mod chat_chunk;
mod gemini;

/// A turn's answer, as a client keeps it for the next turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The answer's text, exactly as the upstream sent it (a stream's deltas joined).
    pub text: String,
    pub calls: Vec<ToolCall>,
    /// The prompt and its cache in the upstream's usage fields, when it reported them.
    pub cache: Option<CacheUsage>,
}

/// One tool call of an answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as JSON text (OpenAI sends them so; Anthropic's `input`, Gemini's `args`
    /// and Bedrock's `input` are written so).
    pub arguments: String,
    /// The answer gave the call no id (Gemini may not): `id` was made from the call's place in
    /// the answer (`call_0`, …), to pair its result, and is not resent.
    pub id_made: bool,
}

/// Reads an answer's body: a stream's raw events when `streamed` (server-sent events, or AWS's
/// binary event stream: a body whose first byte is 0), else one JSON object. `None` when the
/// body is not an answer of any API.
pub fn read(body: &[u8], streamed: bool) -> Option<Answer> {
    let mut answer = Answer::default();
    read_into(&mut answer, body, streamed)?;
    Some(answer)
}

/// Reads a kept answer, taking what it holds: the text and calls of a stream's chat chunks (read
/// as they arrived), then its other events or its whole body, then its chat chunks' usage. `None` when the body is not an
/// answer of any API.
pub fn read_kept(kept: &mut Kept, streamed: bool) -> Option<Answer> {
    let mut answer = Answer {
        text: std::mem::take(&mut kept.text),
        calls: kept
            .calls
            .drain(..)
            .map(|call| ToolCall {
                id: call.id,
                name: call.name,
                arguments: call.arguments,
                id_made: false,
            })
            .collect(),
        cache: None,
    };
    read_into(&mut answer, &std::mem::take(&mut kept.answer), streamed)?;
    for data in events(&kept.usage) {
        if let Ok(chunk) = serde_json::from_slice::<Value>(data) {
            usage(&mut answer, chunk.get("usage"));
        }
    }
    Some(answer)
}

fn read_into(answer: &mut Answer, body: &[u8], streamed: bool) -> Option<()> {
    if streamed && body.first() == Some(&0) {
        bedrock::stream(answer, body)?;
    } else if streamed {
        for data in events(body) {
            if chat_chunk::read(answer, data) {
                continue;
            }
            let Ok(event) = serde_json::from_slice::<Value>(data) else {
                continue;
            };
            if gemini::is_response(&event) {
                gemini::response(answer, &event);
            } else {
                chunk(answer, &event);
            }
        }
    } else {
        let whole: Value = serde_json::from_slice(body).ok()?;
        if !whole.is_object() {
            return None;
        }
        if gemini::is_response(&whole) {
            gemini::response(answer, &whole);
        } else if bedrock::is_response(&whole) {
            bedrock::response(answer, &whole);
        } else {
            complete(answer, &whole);
        }
    }
    Some(())
}

/// The `data:` payloads of a stream's events, `[DONE]` left out.
fn events(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|b| *b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let data = line.strip_prefix(b"data:")?;
        let data = data.strip_prefix(b" ").unwrap_or(data);
        (data != b"[DONE]" && !data.is_empty()).then_some(data)
    })
}

/// A whole answer: a chat completion's first choice, or a message's content blocks.
fn complete(answer: &mut Answer, body: &Value) {
    if let Some(message) = body.pointer("/choices/0/message") {
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            answer.text.push_str(text);
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            answer.calls.push(ToolCall {
                id: text_of(call, "/id"),
                name: text_of(call, "/function/name"),
                arguments: text_of(call, "/function/arguments"),
                id_made: false,
            });
        }
    }
    for block in body
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => answer.text.push_str(&text_of(block, "/text")),
            Some("tool_use") => answer.calls.push(ToolCall {
                id: text_of(block, "/id"),
                name: text_of(block, "/name"),
                arguments: block
                    .get("input")
                    .map_or_else(|| "{}".into(), Value::to_string),
                id_made: false,
            }),
            _ => {}
        }
    }
    for item in body
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        responses_item(answer, item, true);
    }
    usage(answer, body.get("usage"));
}

/// A Responses API output item: a message's text (when `with_text`: a stream sends it as
/// deltas), or a function call.
fn responses_item(answer: &mut Answer, item: &Value, with_text: bool) {
    match item.get("type").and_then(Value::as_str) {
        Some("message") if with_text => {
            for part in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if part.get("type").and_then(Value::as_str) == Some("output_text") {
                    answer.text.push_str(&text_of(part, "/text"));
                }
            }
        }
        Some("function_call") => answer.calls.push(ToolCall {
            id: text_of(item, "/call_id"),
            name: text_of(item, "/name"),
            arguments: if with_text {
                text_of(item, "/arguments")
            } else {
                String::new()
            },
            id_made: false,
        }),
        _ => {}
    }
}

/// One event of a stream: a chat chunk, or an Anthropic event.
fn chunk(answer: &mut Answer, event: &Value) {
    if let Some(delta) = event.pointer("/choices/0/delta") {
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            answer.text.push_str(text);
        }
        for part in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let at = part.get("index").and_then(Value::as_u64).unwrap_or(0);
            let at = usize::try_from(at).unwrap_or(usize::MAX);
            if at >= MOST_CALLS {
                continue;
            }
            while answer.calls.len() <= at {
                answer.calls.push(ToolCall::default());
            }
            let call = &mut answer.calls[at];
            call.id.push_str(&text_of(part, "/id"));
            call.name.push_str(&text_of(part, "/function/name"));
            call.arguments
                .push_str(&text_of(part, "/function/arguments"));
        }
    }
    match event.get("type").and_then(Value::as_str) {
        Some("message_start") => usage(answer, event.pointer("/message/usage")),
        Some("content_block_start") => {
            let block = event.get("content_block");
            if block.and_then(|b| b.get("type")).and_then(Value::as_str) == Some("tool_use") {
                let block = block.unwrap_or(&Value::Null);
                answer.calls.push(ToolCall {
                    id: text_of(block, "/id"),
                    name: text_of(block, "/name"),
                    arguments: String::new(),
                    id_made: false,
                });
            }
        }
        Some("content_block_delta") => match event.pointer("/delta/type").and_then(Value::as_str) {
            Some("text_delta") => answer.text.push_str(&text_of(event, "/delta/text")),
            Some("input_json_delta") => {
                if let Some(call) = answer.calls.last_mut() {
                    call.arguments
                        .push_str(&text_of(event, "/delta/partial_json"));
                }
            }
            _ => {}
        },
        Some("message_delta") => usage(answer, event.get("usage")),
        Some("response.output_text.delta") => answer.text.push_str(&text_of(event, "/delta")),
        Some("response.output_item.added") => {
            responses_item(answer, event.get("item").unwrap_or(&Value::Null), false);
        }
        Some("response.function_call_arguments.delta") => {
            if let Some(call) = answer.calls.last_mut() {
                call.arguments.push_str(&text_of(event, "/delta"));
            }
        }
        // A stream cut by `max_output_tokens` ends in `response.incomplete`, usage and all.
        Some("response.completed" | "response.incomplete") => {
            usage(answer, event.pointer("/response/usage"))
        }
        _ => {}
    }
    if event.get("choices").is_some() {
        usage(answer, event.get("usage"));
    }
}

/// Takes the prompt's cache figures from a usage object, in either API's fields: OpenAI counts
/// cached tokens inside `prompt_tokens`, Anthropic beside `input_tokens`. A later usage
/// (Anthropic's `message_delta`) adds what the earlier one lacked.
fn usage(answer: &mut Answer, usage: Option<&Value>) {
    let Some(usage) = usage.filter(|u| u.is_object()) else {
        return;
    };
    let n = |path: &str| usage.pointer(path).and_then(Value::as_u64);
    let cache = answer.cache.get_or_insert_with(CacheUsage::default);
    if let Some(prompt) = n("/prompt_tokens") {
        cache.prompt_tokens = prompt;
        let cached = n("/prompt_tokens_details/cached_tokens");
        cache.reported = cached.is_some();
        cache.cached_tokens = cached.unwrap_or(0);
        cache.written_tokens = n("/prompt_tokens_details/cache_write_tokens").unwrap_or(0);
        return;
    }
    if let (Some(input), Some(details)) = (n("/input_tokens"), usage.get("input_tokens_details")) {
        // The Responses API counts cached tokens inside `input_tokens`, as chat does.
        let cached = details.get("cached_tokens").and_then(Value::as_u64);
        cache.prompt_tokens = input;
        cache.reported = cached.is_some();
        cache.cached_tokens = cached.unwrap_or(0);
        cache.written_tokens = n("/input_tokens_details/cache_write_tokens").unwrap_or(0);
        return;
    }
    let read = n("/cache_read_input_tokens");
    let written = n("/cache_creation_input_tokens");
    if let Some(input) = n("/input_tokens") {
        cache.reported = read.is_some() || written.is_some();
        let (read, written) = (read.unwrap_or(0), written.unwrap_or(0));
        cache.prompt_tokens = input + read + written;
        cache.cached_tokens = read;
        cache.written_tokens = written;
    }
}

/// The text at `path` of `value`, or an empty one.
fn text_of(value: &Value, path: &str) -> String {
    value
        .pointer(path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_chat_answer_gives_its_text_calls_and_cache() {
        let body = br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi \"there\"",
            "tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}],
            "usage":{"prompt_tokens":1200,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":1024}}}"#;
        let a = read(body, false).unwrap();
        assert_eq!(a.text, "Hi \"there\"");
        assert_eq!(a.calls.len(), 1);
        assert_eq!(a.calls[0].name, "f");
        assert_eq!(a.calls[0].arguments, r#"{"a":1}"#);
        let cache = a.cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (1200, 1024));
        assert!(cache.hit());
    }

    #[test]
    fn a_chat_stream_joins_its_deltas_and_takes_the_usage_chunk() {
        let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"x\"}}]}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":2}\"}}]}}]}\n\n\
            data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":2}}\n\n\
            data: [DONE]\n\n";
        let a = read(body, true).unwrap();
        assert_eq!(a.text, "Hello");
        assert_eq!(a.calls[0].arguments, r#"{"x":2}"#);
        assert_eq!(a.calls[0].id, "c");
        let cache = a.cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (50, 0));
        assert!(
            !cache.hit() && !cache.reported,
            "no cache field: neither hit nor miss"
        );
    }

    #[test]
    fn anthropic_answers_count_cache_reads_beside_the_input() {
        let whole = br#"{"type":"message","content":[{"type":"text","text":"ok"},
            {"type":"tool_use","id":"toolu_1","name":"f","input":{"q":"x"}}],
            "usage":{"input_tokens":10,"cache_read_input_tokens":2048,"cache_creation_input_tokens":100,"output_tokens":2}}"#;
        let a = read(whole, false).unwrap();
        assert_eq!(a.text, "ok");
        assert_eq!(a.calls[0].arguments, r#"{"q":"x"}"#);
        let cache = a.cache.unwrap();
        assert_eq!(cache.prompt_tokens, 2158);
        assert_eq!((cache.cached_tokens, cache.written_tokens), (2048, 100));
        let stream = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":0}}}\n\n\
            event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Yes\"}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let a = read(stream, true).unwrap();
        assert_eq!(a.text, "Yes");
        assert_eq!(a.cache.unwrap().prompt_tokens, 7);
    }

    #[test]
    fn responses_answers_give_their_text_calls_and_cache_inside_the_input() {
        let whole = br#"{"object":"response","output":[{"type":"message","role":"assistant",
            "content":[{"type":"output_text","text":"Hi.","annotations":[]}]},
            {"type":"function_call","call_id":"call_9","name":"f","arguments":"{}"}],
            "usage":{"input_tokens":1300,"input_tokens_details":{"cached_tokens":1280,"cache_write_tokens":0},"output_tokens":2}}"#;
        let a = read(whole, false).unwrap();
        assert_eq!((a.text.as_str(), a.calls[0].id.as_str()), ("Hi.", "call_9"));
        let cache = a.cache.unwrap();
        assert_eq!((cache.prompt_tokens, cache.cached_tokens), (1300, 1280));
        assert!(cache.reported && cache.hit());
        let stream = b"data: {\"type\":\"response.output_text.delta\",\"delta\":\"He\"}\n\n\
            data: {\"type\":\"response.output_text.delta\",\"delta\":\"y\"}\n\n\
            data: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"g\",\"arguments\":\"\"}}\n\n\
            data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{}\"}\n\n\
            data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":9,\"input_tokens_details\":{\"cached_tokens\":0}}}}\n\n";
        let a = read(stream, true).unwrap();
        assert_eq!(
            (a.text.as_str(), a.calls[0].arguments.as_str()),
            ("Hey", "{}")
        );
        assert_eq!(a.cache.unwrap().prompt_tokens, 9);
        let cut = b"data: {\"type\":\"response.output_text.delta\",\"delta\":\"He\"}\n\n\
            data: {\"type\":\"response.incomplete\",\"response\":{\"usage\":{\"input_tokens\":9,\"input_tokens_details\":{\"cached_tokens\":4}}}}\n\n";
        let a = read(cut, true).unwrap();
        assert_eq!(
            a.cache.unwrap().cached_tokens,
            4,
            "an answer cut at its cap"
        );
    }

    #[test]
    fn a_body_that_is_not_an_answer_is_refused() {
        assert!(read(b"[1,2]", false).is_none());
        assert!(read(b"not json", false).is_none());
    }

    /// `body` read by the wire as it arrives in pieces of `piece` bytes, then by `read_kept`.
    fn read_as_it_arrives(body: &[u8], piece: usize) -> Option<Answer> {
        use crate::wire::exchange::Reading;
        use crate::wire::outcome::Exchange;
        let x = Exchange {
            stream: true,
            ..Exchange::default()
        };
        let mut reading = Reading::new(x, 200, true);
        for (i, part) in body.chunks(piece).enumerate() {
            reading.feed(part, i as u64);
        }
        let mut x = reading
            .finish(body.len() as u64)
            .unwrap_or_else(|e| panic!("{e:?}: {}", String::from_utf8_lossy(&body[..40])));
        read_kept(x.kept.as_mut().expect("kept"), true)
    }

    #[test]
    fn a_stream_read_as_it_arrives_is_the_stream_read_whole() {
        let chat = b"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"x\"}}]}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":2}\"}}]}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"function\":{\"name\":\"h\",\"arguments\":\"{}\"}}]}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
            data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\n\
            data: [DONE]\n\n";
        let anthropic = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":3}}}\n\n\
            event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Yes\"}}\n\n\
            event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n\
            event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":2}}\n\n\
            event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let responses = b"data: {\"type\":\"response.output_text.delta\",\"delta\":\"He\"}\n\n\
            data: {\"type\":\"response.output_text.delta\",\"delta\":\"y\"}\n\n\
            data: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"g\",\"arguments\":\"\"}}\n\n\
            data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{}\"}\n\n\
            event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":3,\"input_tokens_details\":{\"cached_tokens\":0}}}}\n\n";
        let gemini = b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":9}}\r\n\r\n\
            data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n\
            data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"!\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\
            \"usageMetadata\":{\"promptTokenCount\":1200,\"candidatesTokenCount\":3,\"totalTokenCount\":1203}}\r\n\r\n";
        let bedrock: Vec<u8> = [
            ("messageStart", r#"{"role":"assistant"}"#),
            ("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"He"}}"#),
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"look"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{}"}}}"#,
            ),
            (
                "metadata",
                r#"{"usage":{"inputTokens":40,"outputTokens":2,"totalTokens":1068,"cacheReadInputTokens":1024}}"#,
            ),
        ]
        .iter()
        .flat_map(|(kind, json)| gatebench_shared::eventstream::event(kind, json.as_bytes()))
        .collect();
        // A usage on a chunk with text, an index and an id of other types, and an event of two
        // `data:` lines, each read as the whole-body reader reads it.
        let odd = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"B\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4}}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"C\"}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":\"0\",\"id\":7,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"D\"}}]}\n\
            data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"E\"}}]}\n\n\
            data: [DONE]\n\n";
        let read_odd = read(odd, true).unwrap();
        assert_eq!(read_odd.text, "ABCDE");
        assert_eq!(
            (
                read_odd.calls[0].id.as_str(),
                read_odd.calls[0].name.as_str()
            ),
            ("", "f")
        );
        assert_eq!(read_odd.cache.unwrap().prompt_tokens, 5);
        for body in [&chat[..], anthropic, responses, gemini, &bedrock, odd] {
            let whole = read(body, true).unwrap();
            assert!(!whole.text.is_empty() && whole.cache.is_some());
            for piece in [1, 7, 64, body.len()] {
                assert_eq!(read_as_it_arrives(body, piece).as_ref(), Some(&whole));
            }
        }
        let chat = read(chat, true).unwrap();
        assert_eq!(chat.text, "Hello");
        let calls: Vec<_> = chat
            .calls
            .iter()
            .map(|c| (&*c.id, &*c.name, &*c.arguments))
            .collect();
        assert_eq!(calls, [("c1", "g", r#"{"x":2}"#), ("c2", "h", "{}")]);
        assert_eq!(chat.cache.unwrap().cached_tokens, 32);
    }

    #[test]
    fn a_call_past_the_most_read_is_not_read() {
        let far = |index: usize| {
            format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"id\":\"c\",\"function\":{{\"name\":\"g\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n\ndata: [DONE]\n\n")
        };
        for (index, calls) in [
            (1_000_000_000_000, 0),
            (MOST_CALLS, 0),
            (MOST_CALLS - 1, MOST_CALLS),
        ] {
            let chat = far(index);
            assert_eq!(read(chat.as_bytes(), true).unwrap().calls.len(), calls);
            assert_eq!(
                read_as_it_arrives(chat.as_bytes(), 9).unwrap().calls.len(),
                calls
            );
        }
    }
}
