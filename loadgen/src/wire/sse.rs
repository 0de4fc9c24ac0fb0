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

/// Most bytes of one event; a longer one (a target that never ends its event) is `Invalid`
/// and dropped, so memory stays bounded.
const MAX_EVENT: usize = 1 << 20;

/// Splits a byte stream into events (separated by a blank line) and classifies each.
#[derive(Debug, Default)]
pub struct SseReader {
    pending: Vec<u8>,
    /// Set by the body's first byte: AWS event stream messages rather than SSE text.
    binary: Option<bool>,
}

impl SseReader {
    pub fn new() -> SseReader {
        SseReader::default()
    }

    /// Feeds bytes as they arrive; calls `on_event` for every event they complete.
    pub fn feed(&mut self, bytes: &[u8], mut on_event: impl FnMut(Event)) {
        self.pending.extend_from_slice(bytes);
        if self.binary.is_none() && !self.pending.is_empty() {
            self.binary = Some(self.pending[0] == 0);
        }
        if self.binary == Some(true) {
            return self.feed_binary(on_event);
        }
        let mut start = 0;
        while let Some(end) = find_blank_line(&self.pending[start..]) {
            let event = &self.pending[start..start + end.0];
            on_event(classify(event));
            start += end.0 + end.1;
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_EVENT {
            on_event(Event::Invalid);
            self.pending.clear();
        }
    }

    /// Reads whole event stream messages off the pending bytes.
    fn feed_binary(&mut self, mut on_event: impl FnMut(Event)) {
        let mut start = 0;
        loop {
            match gatebench_shared::eventstream::decode(&self.pending[start..]) {
                Ok(Some((message, used))) => {
                    on_event(classify_message(&message));
                    start += used;
                }
                Ok(None) => break,
                Err(_) => {
                    on_event(Event::Invalid);
                    start = self.pending.len();
                    break;
                }
            }
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_EVENT {
            on_event(Event::Invalid);
            self.pending.clear();
        }
    }

    /// True when bytes of an unfinished event are left over.
    pub fn has_partial_event(&self) -> bool {
        self.pending.iter().any(|b| !b.is_ascii_whitespace())
    }
}

/// Position and length of the first event separator (`\n\n` or `\r\n\r\n`).
fn find_blank_line(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n");
    let crlf = bytes.windows(4).position(|w| w == b"\r\n\r\n");
    match (lf, crlf) {
        (Some(a), Some(b)) if b < a => Some((b, 4)),
        (Some(a), _) => Some((a, 2)),
        (None, Some(b)) => Some((b, 4)),
        (None, None) => None,
    }
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Vec<ChunkChoice<'a>>,
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

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    /// A tool call's `arguments`, streamed in fragments.
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    arguments: Option<std::borrow::Cow<'a, str>>,
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

fn classify(event: &[u8]) -> Event {
    let mut name: &[u8] = b"";
    let mut data: &[u8] = b"";
    for line in event.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(v) = line.strip_prefix(b"event:") {
            name = v.trim_ascii();
        } else if let Some(v) = line.strip_prefix(b"data:") {
            data = v.trim_ascii();
        }
    }
    match name {
        b"content_block_delta"
        | b"response.output_text.delta"
        | b"response.function_call_arguments.delta" => return Event::Output,
        b"message_stop" => return Event::Done,
        b"response.completed" | b"response.incomplete" => return final_event(data),
        b"response.failed" | b"error" => return Event::Invalid,
        _ => {}
    }
    if data == b"[DONE]" {
        return Event::Done;
    }
    if data.is_empty() {
        return Event::Other; // a comment or a keep-alive
    }
    let Ok(chunk) = serde_json::from_slice::<Chunk>(data) else {
        return Event::Invalid;
    };
    if chunk.error.is_some() {
        return Event::Invalid;
    }
    if !chunk.candidates.is_empty() {
        return chunk.gemini();
    }
    if matches!(
        chunk.kind,
        Some(
            "content_block_delta"
                | "response.output_text.delta"
                | "response.function_call_arguments.delta"
        )
    ) {
        return Event::Output;
    }
    let has_text = chunk.choices.iter().any(|c| {
        c.delta.as_ref().is_some_and(Delta::has_output)
            || c.text.as_ref().is_some_and(|t| !t.is_empty())
    });
    if has_text {
        return Event::Output;
    }
    match chunk
        .usage
        .and_then(|u| u.completion_tokens.or(u.output_tokens))
    {
        Some(tokens) => Event::Usage(tokens),
        None => Event::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(parts: &[&[u8]]) -> (Vec<Event>, bool) {
        let mut reader = SseReader::new();
        let mut out = Vec::new();
        for part in parts {
            reader.feed(part, |e| out.push(e));
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
}
