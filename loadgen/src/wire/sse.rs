//! Reading a server-sent-event stream as it arrives: events split across frames, output-bearing
//! events told apart from the rest, the end marker checked.
//!
//! An event is *output-bearing* (it counts for TTFT and ITL) when it carries generated output:
//! an OpenAI chat chunk with a non-empty `delta.content` or tool-call `arguments` fragment, an
//! Anthropic `content_block_delta` (text or `input_json_delta`), a Responses
//! `response.output_text.delta` or `response.function_call_arguments.delta`, or a Gemini partial
//! response with text in its candidate's parts. A Gemini stream has no end marker: its last
//! partial response, the one with a `finishReason`, ends it.
//!
//! A caller that keeps the answer (a session's turn) is also handed what each event held: a
//! chat completion chunk's deltas, read in the same pass that classified it, or any other
//! event's data, for its own reader.
//!
//! AWS's binary event stream (Bedrock's `converse-stream`) is read by the same reader: a body
//! whose first byte is 0 (the high byte of a message's length; no SSE text starts so) is taken
//! as event stream messages, each checksum checked: `contentBlockDelta` is output, `metadata`
//! (with the usage) the end, an exception message an error.

use serde::Deserialize;

/// What one complete event was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Carries output text.
    Output,
    /// A usage report with this many completion tokens.
    Usage(u64),
    /// Any other well-formed event (role chunk, finish chunk, ping, …).
    Other,
    /// The end of the stream: `data: [DONE]` or Anthropic `message_stop`.
    Done,
    /// The end of a Responses stream (`response.completed` or `response.incomplete`), or a
    /// Gemini stream's last partial response without text, with the output tokens of its usage.
    Final(Option<u64>),
    /// Output text and the end at once (a Gemini stream's last partial response), with the
    /// output tokens of its usage.
    OutputFinal(Option<u64>),
    /// An event whose data is not valid JSON.
    Invalid,
}

/// What an event held besides its class.
#[derive(Debug, Clone, Copy)]
pub enum Held<'e, 'a> {
    /// Nothing to keep: an end marker, a keep-alive, an invalid or a binary event.
    Nothing,
    /// An OpenAI chat completion chunk: its first choice's delta, when it had one, and its data
    /// again when it carries a usage (read after the stream, for the prompt's cache).
    Chat {
        delta: Option<&'e Delta<'a>>,
        usage: Option<&'e [u8]>,
    },
    /// Any other event, whole and unread (another API's, or one of several `data:` lines).
    Event(&'e [u8]),
}

/// Most bytes of one event; a longer one (a target that never ends its event) is `Invalid`
/// and dropped, so memory stays bounded.
const MAX_EVENT: usize = 1 << 20;

/// Splits a byte stream into events (separated by a blank line) and classifies each.
///
/// Events are read in place from the bytes fed; only an unfinished event's bytes are kept for
/// the next feed, and the search for its end goes on from where it stopped, so a stream costs
/// one pass over its bytes however it is split (a tool round's answer is read between its last
/// byte and the next request).
#[derive(Debug, Default)]
pub struct SseReader {
    pending: Vec<u8>,
    /// Bytes of `pending` already searched for a separator (less the 3 a separator cut at its
    /// end may have begun in).
    searched: usize,
    /// Set by the body's first byte: AWS event stream messages rather than SSE text.
    binary: Option<bool>,
}

impl SseReader {
    pub fn new() -> SseReader {
        SseReader::default()
    }

    /// Feeds bytes as they arrive; calls `on_event` for every event they complete, with what
    /// it held.
    pub fn feed(&mut self, bytes: &[u8], mut on_event: impl FnMut(Event, Held)) {
        if self.binary.is_none() {
            self.binary = self.pending.first().or(bytes.first()).map(|b| *b == 0);
        }
        if self.binary == Some(true) {
            self.pending.extend_from_slice(bytes);
            return self.feed_binary(on_event);
        }
        if self.pending.is_empty() {
            let used = read_events(bytes, 0, &mut on_event);
            self.pending.extend_from_slice(&bytes[used..]);
        } else {
            // The unfinished event goes on in `bytes`: search on from where the last search
            // stopped.
            self.pending.extend_from_slice(bytes);
            let used = read_events(&self.pending, self.searched, &mut on_event);
            self.pending.drain(..used);
        }
        self.searched = self.pending.len().saturating_sub(3);
        if self.pending.len() > MAX_EVENT {
            on_event(Event::Invalid, Held::Nothing);
            self.pending.clear();
            self.searched = 0;
        }
    }

    /// Reads whole event stream messages off the pending bytes.
    fn feed_binary(&mut self, mut on_event: impl FnMut(Event, Held)) {
        let mut start = 0;
        loop {
            match gatebench_shared::eventstream::decode(&self.pending[start..]) {
                Ok(Some((message, used))) => {
                    on_event(classify_message(&message), Held::Nothing);
                    start += used;
                }
                Ok(None) => break,
                Err(_) => {
                    on_event(Event::Invalid, Held::Nothing);
                    start = self.pending.len();
                    break;
                }
            }
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_EVENT {
            on_event(Event::Invalid, Held::Nothing);
            self.pending.clear();
        }
    }

    /// True once the body's first byte said it is AWS's binary event stream.
    pub fn is_binary(&self) -> bool {
        self.binary == Some(true)
    }

    /// True when bytes of an unfinished event are left over.
    pub fn has_partial_event(&self) -> bool {
        self.pending.iter().any(|b| !b.is_ascii_whitespace())
    }
}

/// Classifies every whole event of `bytes`, the first separator searched for from `from`;
/// the bytes used (up to the end of the last separator).
fn read_events(bytes: &[u8], from: usize, on_event: &mut impl FnMut(Event, Held)) -> usize {
    let mut start = 0;
    let mut search = from;
    while let Some((at, len)) = find_blank_line(bytes, search) {
        classify(&bytes[start..at], on_event);
        start = at + len;
        search = start;
    }
    start
}

/// Position and length of the first event separator (`\n\n` or `\r\n\r\n`) of `bytes` that
/// ends after `from`, in one pass over the newlines from there.
fn find_blank_line(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let from = from.min(bytes.len());
    for i in memchr::memchr_iter(b'\n', &bytes[from..]).map(|i| from + i) {
        match bytes.get(i + 1) {
            Some(b'\n') => return Some((i, 2)),
            Some(b'\r') if i > 0 && bytes[i - 1] == b'\r' && bytes.get(i + 2) == Some(&b'\n') => {
                return Some((i - 1, 4))
            }
            _ => {}
        }
    }
    None
}

#[derive(Deserialize)]
struct Chunk<'a> {
    /// `None` when the event has no `choices` (a chat chunk always has it).
    #[serde(borrow, default)]
    choices: Option<Vec<ChunkChoice<'a>>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default, rename = "type")]
    kind: Option<&'a str>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
    /// Gemini's partial response.
    #[serde(borrow, default)]
    candidates: Vec<Candidate<'a>>,
    #[serde(default, rename = "usageMetadata")]
    usage_metadata: Option<UsageMetadata>,
}

#[derive(Deserialize)]
struct Candidate<'a> {
    #[serde(borrow, default)]
    content: Option<CandidateContent<'a>>,
    #[serde(default, rename = "finishReason")]
    finish_reason: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct CandidateContent<'a> {
    #[serde(borrow, default)]
    parts: Vec<TextPart<'a>>,
}

#[derive(Deserialize)]
struct TextPart<'a> {
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Deserialize)]
struct UsageMetadata {
    #[serde(default, rename = "candidatesTokenCount")]
    candidates_token_count: Option<u64>,
}

impl Chunk<'_> {
    /// A Gemini partial response: output, its end, both, or neither.
    fn gemini(&self) -> Event {
        let text = self.candidates.iter().any(|c| {
            c.content
                .iter()
                .flat_map(|content| &content.parts)
                .any(|p| p.text.as_ref().is_some_and(|t| !t.is_empty()))
        });
        let last = self.candidates.iter().any(|c| c.finish_reason.is_some());
        let tokens = self
            .usage_metadata
            .as_ref()
            .and_then(|u| u.candidates_token_count);
        match (text, last) {
            (true, true) => Event::OutputFinal(tokens),
            (false, true) => Event::Final(tokens),
            (true, false) => Event::Output,
            (false, false) => Event::Other,
        }
    }
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    /// Legacy completions carry the text here.
    #[serde(borrow, default)]
    text: Option<std::borrow::Cow<'a, str>>,
}

/// A chat chunk's delta: its text, and its tool calls' fragments.
#[derive(Debug, Deserialize)]
pub struct Delta<'a> {
    #[serde(borrow, default)]
    pub content: Option<std::borrow::Cow<'a, str>>,
    /// A tool call's `arguments`, streamed in fragments.
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

/// A fragment of a tool call: the first names it, the rest add to its arguments.
///
/// Its index, id and name are read as the tree reader reads them: one of another type (an index
/// sent as a string) is none, and the chunk is still read.
#[derive(Debug, Deserialize)]
pub struct ToolCallDelta<'a> {
    #[serde(default, deserialize_with = "lenient::number")]
    pub index: Option<u64>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pub function: Option<FunctionDelta<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct FunctionDelta<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<std::borrow::Cow<'a, str>>,
}

impl Delta<'_> {
    /// True when the delta carries output: text, or a tool call's argument fragment.
    fn has_output(&self) -> bool {
        self.content.as_ref().is_some_and(|t| !t.is_empty())
            || self.tool_calls.iter().flatten().any(|call| {
                call.function
                    .as_ref()
                    .and_then(|f| f.arguments.as_ref())
                    .is_some_and(|a| !a.is_empty())
            })
    }
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

/// A Responses stream's last event, with `response.usage.output_tokens` when it parses.
fn final_event(data: &[u8]) -> Event {
    #[derive(Deserialize)]
    struct Final {
        response: Option<FinalResponse>,
    }
    #[derive(Deserialize)]
    struct FinalResponse {
        usage: Option<Usage>,
    }
    match serde_json::from_slice::<Final>(data) {
        Ok(f) => Event::Final(
            f.response
                .and_then(|r| r.usage)
                .and_then(|u| u.output_tokens),
        ),
        Err(_) => Event::Invalid,
    }
}

/// An event stream message: Bedrock Converse's events.
fn classify_message(message: &gatebench_shared::eventstream::Message) -> Event {
    #[derive(Deserialize)]
    struct Metadata {
        usage: Option<MetadataUsage>,
    }
    #[derive(Deserialize)]
    struct MetadataUsage {
        #[serde(rename = "outputTokens")]
        output_tokens: Option<u64>,
    }
    if message.header(":message-type") != Some("event") {
        return Event::Invalid;
    }
    match message.header(":event-type") {
        Some("contentBlockDelta") => Event::Output,
        Some("metadata") => match serde_json::from_slice::<Metadata>(&message.payload) {
            Ok(m) => Event::Final(m.usage.and_then(|u| u.output_tokens)),
            Err(_) => Event::Invalid,
        },
        _ => Event::Other,
    }
}

/// Classifies one event and hands it to `on_event` with what it held.
fn classify(event: &[u8], on_event: &mut impl FnMut(Event, Held)) {
    let mut name: &[u8] = b"";
    let mut data: &[u8] = b"";
    let mut data_lines = 0;
    for line in event.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(v) = line.strip_prefix(b"event:") {
            name = v.trim_ascii();
        } else if let Some(v) = line.strip_prefix(b"data:") {
            data = v.trim_ascii();
            data_lines += 1;
        }
    }
    let named = match name {
        b"content_block_delta"
        | b"response.output_text.delta"
        | b"response.function_call_arguments.delta" => Some(Event::Output),
        b"message_stop" => Some(Event::Done),
        b"response.completed" | b"response.incomplete" => Some(final_event(data)),
        b"response.failed" | b"error" => Some(Event::Invalid),
        _ => None,
    };
    if let Some(class) = named {
        return on_event(class, Held::Event(event));
    }
    if data == b"[DONE]" {
        return on_event(Event::Done, Held::Nothing);
    }
    if data.is_empty() {
        return on_event(Event::Other, Held::Nothing); // a comment or a keep-alive
    }
    let Ok(chunk) = serde_json::from_slice::<Chunk>(data) else {
        return on_event(Event::Invalid, Held::Nothing);
    };
    let class = chunk.event();
    // A chat chunk as a session's reader of chat chunks takes it; any other event is left to
    // its reader of every API's events.
    let chat = chunk.kind.is_none()
        && chunk.candidates.is_empty()
        && chunk.usage_metadata.is_none()
        && chunk.choices.is_some()
        && data_lines == 1
        && class != Event::Invalid;
    if chat {
        let delta = chunk
            .choices
            .iter()
            .flatten()
            .next()
            .and_then(|c| c.delta.as_ref());
        let usage = chunk.usage.is_some().then_some(data);
        on_event(class, Held::Chat { delta, usage });
    } else {
        on_event(class, Held::Event(event));
    }
}

impl Chunk<'_> {
    /// The class of a parsed event's data.
    fn event(&self) -> Event {
        if self.error.is_some() {
            return Event::Invalid;
        }
        if !self.candidates.is_empty() {
            return self.gemini();
        }
        if matches!(
            self.kind,
            Some(
                "content_block_delta"
                    | "response.output_text.delta"
                    | "response.function_call_arguments.delta"
            )
        ) {
            return Event::Output;
        }
        let has_text = self.choices.iter().flatten().any(|c| {
            c.delta.as_ref().is_some_and(Delta::has_output)
                || c.text.as_ref().is_some_and(|t| !t.is_empty())
        });
        if has_text {
            return Event::Output;
        }
        match self
            .usage
            .as_ref()
            .and_then(|u| u.completion_tokens.or(u.output_tokens))
        {
            Some(tokens) => Event::Usage(tokens),
            None => Event::Other,
        }
    }
}

/// Fields read as a tree reader reads them: a value of another type is none, not an error.
mod lenient {
    use std::borrow::Cow;
    use std::fmt;

    use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::Deserializer;

    /// Any other value, skipped: none.
    macro_rules! none_otherwise {
        () => {
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        };
    }

    /// A whole number of 64 bits, or none.
    pub fn number<'de, D: Deserializer<'de>>(field: D) -> Result<Option<u64>, D::Error> {
        struct Number;
        impl<'de> Visitor<'de> for Number {
            type Value = Option<u64>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Ok(Some(n))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(None)
            }
            none_otherwise!();
        }
        field.deserialize_any(Number)
    }

    /// A string, borrowed when it has no escapes, or none.
    pub fn text<'de: 'a, 'a, D: Deserializer<'de>>(
        field: D,
    ) -> Result<Option<Cow<'a, str>>, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(s.to_string())))
            }
            none_otherwise!();
        }
        field.deserialize_any(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(parts: &[&[u8]]) -> (Vec<Event>, bool) {
        let mut reader = SseReader::new();
        let mut out = Vec::new();
        for part in parts {
            reader.feed(part, |e, _| out.push(e));
        }
        (out, reader.has_partial_event())
    }

    #[test]
    fn bedrock_event_streams_are_read_message_by_message() {
        use gatebench_shared::eventstream::{event, exception};
        let stream = [
            event("messageStart", br#"{"role":"assistant"}"#),
            event(
                "contentBlockDelta",
                br#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
            ),
            event("contentBlockStop", br#"{"contentBlockIndex":0}"#),
            event(
                "metadata",
                br#"{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}"#,
            ),
        ]
        .concat();
        let expected = vec![
            Event::Other,
            Event::Output,
            Event::Other,
            Event::Final(Some(1)),
        ];
        assert_eq!(events(&[&stream]), (expected.clone(), false));
        let bytes: Vec<&[u8]> = stream.chunks(7).collect();
        assert_eq!(events(&bytes), (expected, false));
        let error = exception("modelStreamErrorException", br#"{"message":"x"}"#);
        assert_eq!(events(&[&error]).0, vec![Event::Invalid]);
        let mut bad = stream.clone();
        bad[30] ^= 1;
        assert_eq!(events(&[&bad]).0, vec![Event::Invalid]);
        assert!(events(&[&stream[..stream.len() - 3]]).1);
    }

    #[test]
    fn classifies_openai_chunks_across_split_frames() {
        let stream: &[u8] = b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
            data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\
            data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
            data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n\
            data: [DONE]\n\n";
        let expected = vec![
            Event::Other,
            Event::Output,
            Event::Other,
            Event::Usage(1),
            Event::Done,
        ];
        // Whole, and cut at every byte.
        assert_eq!(events(&[stream]), (expected.clone(), false));
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), (expected, false));
    }

    #[test]
    fn tool_call_argument_fragments_are_output() {
        let stream: &[u8] = b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n\
            data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\"}}]}}]}\n\n\
            data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n";
        let expected = vec![Event::Other, Event::Output, Event::Other, Event::Output];
        assert_eq!(events(&[stream]), (expected, false));
    }

    #[test]
    fn anthropic_and_responses_events_and_crlf() {
        let stream: &[u8] = b"event: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n\
            event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\"}\r\n\r\n\
            event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
        assert_eq!(
            events(&[stream]).0,
            vec![Event::Other, Event::Output, Event::Done]
        );
        let responses: &[u8] =
            b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\n";
        assert_eq!(events(&[responses]).0, vec![Event::Output]);
        let call: &[u8] = b"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\"}\n\n\
            data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"x\"}\n\n";
        assert_eq!(events(&[call]).0, vec![Event::Output, Event::Output]);
        let gemini: &[u8] = b"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hello\"}],\"role\":\"model\"},\"index\":0}]}\r\n\r\n\
            data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" there\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2,\"totalTokenCount\":5}}\r\n\r\n\
            data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"MAX_TOKENS\"}]}\r\n\r\n";
        assert_eq!(
            events(&[gemini]).0,
            vec![
                Event::Output,
                Event::OutputFinal(Some(2)),
                Event::Final(None)
            ]
        );
        let end: &[u8] = b"event: response.completed\ndata: {\"type\":\"response.completed\",\
            \"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":7}}}\n\n\
            event: response.failed\ndata: {\"type\":\"response.failed\"}\n\n";
        assert_eq!(
            events(&[end]).0,
            vec![Event::Final(Some(7)), Event::Invalid]
        );
    }

    #[test]
    fn broken_and_unfinished_events_are_reported() {
        let (out, partial) = events(&[b"data: {not json\n\ndata: {\"choices\":["]);
        assert_eq!(out, vec![Event::Invalid]);
        assert!(partial);
        let (out, _) = events(&[b"data: {\"error\":{\"message\":\"boom\"}}\n\n"]);
        assert_eq!(out, vec![Event::Invalid]);
    }

    #[test]
    fn events_are_the_same_however_the_stream_is_cut() {
        let lf: &[u8] = b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n\
            : keep-alive\n\n\
            data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\r\n\n\
            data: [DONE]\n\n";
        let crlf: &[u8] = b"event: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n\
            event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\"}\r\n\r\n\
            event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
        for stream in [lf, crlf] {
            let whole = events(&[stream]);
            assert!(!whole.1);
            for a in 0..stream.len() {
                for b in a..stream.len() {
                    let pieces = [&stream[..a], &stream[a..b], &stream[b..]];
                    assert_eq!(events(&pieces), whole, "cut at {a} and {b}");
                }
            }
        }
    }

    #[test]
    fn an_event_that_never_ends_is_dropped_as_invalid() {
        let mut sse = SseReader::new();
        let mut seen = Vec::new();
        let piece = vec![b'x'; 64 << 10];
        sse.feed(b"data: ", |e, _| seen.push(e));
        // The 16th piece takes the event past `MAX_EVENT`.
        for _ in 0..MAX_EVENT / piece.len() {
            sse.feed(&piece, |e, _| seen.push(e));
        }
        assert_eq!(seen, vec![Event::Invalid]);
        sse.feed(b"data: [DONE]\n\n", |e, _| seen.push(e));
        assert_eq!(seen, vec![Event::Invalid, Event::Done]);
    }
}
