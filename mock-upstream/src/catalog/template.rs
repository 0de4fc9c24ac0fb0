//! Response templates: a response serialised once with sentinel values, then cut at them.
//!
//! The wire types in `gatebench_shared::wire` are the one definition of each shape. The catalog
//! serialises them with sentinels standing where per-request values go (the model, the content,
//! usage counts), and this module cuts the bytes at the sentinels. Filling a template is then a
//! walk over literal `Bytes` and slots: no JSON is built per request.

use bytes::Bytes;

use crate::catalog::payload::{decimal_len, Payload, Sink};

/// A per-request value in a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The model name, as it was written in the request (already JSON-escaped).
    Model,
    /// The output text (already JSON-escaped).
    Content,
    PromptTokens,
    CompletionTokens,
    TotalTokens,
    /// The event's position in its stream (the Responses API's `sequence_number`).
    Sequence,
    /// Keys and values the response echoes from its request (the Responses API's parameters),
    /// serialised without their braces.
    Echo,
}

impl Slot {
    const ALL: [Slot; 7] = [
        Slot::Model,
        Slot::Content,
        Slot::PromptTokens,
        Slot::CompletionTokens,
        Slot::TotalTokens,
        Slot::Sequence,
        Slot::Echo,
    ];

    /// The string to serialise in this slot's place.
    pub const MODEL_SENTINEL: &'static str = "\u{1}gb-model\u{1}";
    pub const CONTENT_SENTINEL: &'static str = "\u{1}gb-content\u{1}";
    /// The numbers to serialise in the usage slots' places.
    pub const PROMPT_SENTINEL: u64 = 9_176_000_000_000_000_001;
    pub const COMPLETION_SENTINEL: u64 = 9_176_000_000_000_000_002;
    pub const TOTAL_SENTINEL: u64 = 9_176_000_000_000_000_003;
    pub const SEQUENCE_SENTINEL: u64 = 9_176_000_000_000_000_004;
    /// The key that stands, with a `null` value, where the echoed keys go (see [`EchoSlot`]).
    pub const ECHO_SENTINEL: &'static str = "\u{1}gb-echo\u{1}";

    /// How the sentinel appears in serialised JSON.
    fn marker(self) -> String {
        let escaped = |s: &str| String::from_utf8_lossy(&json_escaped(s)).into_owned();
        match self {
            Slot::Model => escaped(Self::MODEL_SENTINEL),
            Slot::Content => escaped(Self::CONTENT_SENTINEL),
            Slot::PromptTokens => Self::PROMPT_SENTINEL.to_string(),
            Slot::CompletionTokens => Self::COMPLETION_SENTINEL.to_string(),
            Slot::TotalTokens => Self::TOTAL_SENTINEL.to_string(),
            Slot::Sequence => Self::SEQUENCE_SENTINEL.to_string(),
            Slot::Echo => format!("\"{}\":null", escaped(Self::ECHO_SENTINEL)),
        }
    }
}

#[derive(Debug, Clone)]
enum Part {
    Literal(Bytes),
    Slot(Slot),
}

/// A pre-encoded response with slots for per-request values.
#[derive(Debug, Clone)]
pub struct Template {
    parts: Vec<Part>,
    /// Bytes of the literal parts: with `times`, what a filled template's length is counted
    /// from.
    literal_len: usize,
    /// How often each slot appears, by `Slot as usize`.
    times: [usize; Slot::ALL.len()],
    /// Whether any usage or sequence number appears (their digits cost to count).
    has_number: bool,
}

/// The per-request values that fill a template's slots.
#[derive(Debug, Clone)]
pub struct Fill<'a> {
    pub model: &'a Bytes,
    pub content: &'a Bytes,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The event's index in its stream (0 outside streams).
    pub sequence: u64,
    /// What fills [`Slot::Echo`] (empty for templates without one).
    pub echo: &'a Bytes,
}

/// An empty value for a slot (no content yet, no echo): a static, so a fill makes and drops no
/// `Bytes` for it.
pub static EMPTY: Bytes = Bytes::new();

/// Serialises as a map of one key, [`Slot::ECHO_SENTINEL`]: flattened into a wire type where
/// the echoed keys go, it marks their place.
#[derive(Debug, Clone, Copy)]
pub struct EchoSlot;

impl serde::Serialize for EchoSlot {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(Slot::ECHO_SENTINEL, &())?;
        map.end()
    }
}

impl Template {
    /// Cuts `encoded` at every sentinel.
    ///
    /// # Panics
    /// If the result needs more than [`MAX_PIECES`] pieces: templates are fixed at compile time,
    /// so this is caught by the catalog's tests.
    pub fn parse(encoded: &[u8]) -> Template {
        let markers: Vec<(Slot, String)> = Slot::ALL.iter().map(|s| (*s, s.marker())).collect();
        let mut parts = Vec::new();
        let mut rest = encoded;
        while !rest.is_empty() {
            let next = markers
                .iter()
                .filter_map(|(slot, m)| find(rest, m.as_bytes()).map(|at| (at, *slot, m.len())))
                .min_by_key(|(at, ..)| *at);
            match next {
                Some((at, slot, len)) => {
                    if at > 0 {
                        parts.push(Part::Literal(permanent(&rest[..at])));
                    }
                    parts.push(Part::Slot(slot));
                    rest = &rest[at + len..];
                }
                None => {
                    parts.push(Part::Literal(permanent(rest)));
                    rest = &[];
                }
            }
        }
        assert!(
            parts.len() <= 2 * crate::catalog::payload::MAX_PIECES,
            "template has {} pieces",
            parts.len()
        );
        let literal_len = parts
            .iter()
            .map(|part| match part {
                Part::Literal(bytes) => bytes.len(),
                Part::Slot(_) => 0,
            })
            .sum();
        let mut times = [0; Slot::ALL.len()];
        for part in &parts {
            if let Part::Slot(slot) = part {
                times[*slot as usize] += 1;
            }
        }
        let has_number = [
            Slot::PromptTokens,
            Slot::CompletionTokens,
            Slot::TotalTokens,
            Slot::Sequence,
        ]
        .iter()
        .any(|slot| times[*slot as usize] > 0);
        Template {
            parts,
            literal_len,
            times,
            has_number,
        }
    }

    /// Appends this template, filled, to `sink`: a payload's pieces (hyper's path) or the own
    /// server's write buffer.
    pub fn fill_into<S: Sink>(&self, sink: &mut S, fill: &Fill<'_>) {
        sink.open(|| self.filled_len(fill));
        for part in &self.parts {
            match part {
                Part::Literal(bytes) => sink.put(bytes),
                Part::Slot(Slot::Model) => sink.put(fill.model),
                Part::Slot(Slot::Content) => sink.put(fill.content),
                Part::Slot(Slot::PromptTokens) => sink.put_number(fill.prompt_tokens),
                Part::Slot(Slot::CompletionTokens) => sink.put_number(fill.completion_tokens),
                Part::Slot(Slot::TotalTokens) => {
                    sink.put_number(fill.prompt_tokens + fill.completion_tokens)
                }
                Part::Slot(Slot::Sequence) => sink.put_number(fill.sequence),
                Part::Slot(Slot::Echo) => sink.put(fill.echo),
            }
        }
    }

    /// Bytes of this template filled with `fill`: counted from how often each slot appears,
    /// without a walk over the parts (a loop cost a chat chunk about 150 instructions).
    #[inline]
    fn filled_len(&self, fill: &Fill<'_>) -> usize {
        let times = |slot: Slot| self.times[slot as usize];
        let len = self.literal_len
            + times(Slot::Model) * fill.model.len()
            + times(Slot::Content) * fill.content.len()
            + times(Slot::Echo) * fill.echo.len();
        if self.has_number {
            len + self.numbers_len(fill)
        } else {
            len
        }
    }

    /// Digits of the numbers a fill puts in this template (out of line: most stream events
    /// have none, and counting digits is what costs).
    #[inline(never)]
    fn numbers_len(&self, fill: &Fill<'_>) -> usize {
        let times = |slot: Slot| self.times[slot as usize];
        times(Slot::PromptTokens) * decimal_len(fill.prompt_tokens)
            + times(Slot::CompletionTokens) * decimal_len(fill.completion_tokens)
            + times(Slot::TotalTokens) * decimal_len(fill.prompt_tokens + fill.completion_tokens)
            + times(Slot::Sequence) * decimal_len(fill.sequence)
    }

    /// This template filled, as a new payload. A template of more pieces than a payload holds
    /// (the Responses API's whole response, with its echoed parameters) is filled into one
    /// buffer, a copy; the chat and Anthropic bodies fit (the catalog's tests check). Stream
    /// events fill a [`crate::catalog::payload::Frames`], which takes an event too large for one frame
    /// as two.
    #[inline]
    pub fn fill(&self, fill: &Fill<'_>) -> Payload {
        let mut frame = Payload::new();
        if self.parts.len() > crate::catalog::payload::MAX_PIECES {
            let mut joined = bytes::BytesMut::new();
            self.fill_into(&mut joined, fill);
            frame.push_bytes(&joined.freeze());
        } else {
            self.fill_into(&mut frame, fill);
        }
        frame
    }

    /// Number of pieces a filled frame takes.
    #[cfg(test)]
    pub fn pieces(&self) -> usize {
        self.parts.len()
    }
}

/// A string as it appears between the quotes of a JSON string.
pub fn json_escaped(s: &str) -> Vec<u8> {
    // Invariant: serialising a &str cannot fail.
    let mut quoted = serde_json::to_vec(s).expect("string serialises");
    quoted.pop();
    quoted.remove(0);
    quoted
}

/// Bytes that live as long as the process, so cloning or dropping them is a pointer copy with no
/// reference count to touch. Catalogs are built once per server; their few kilobytes are
/// leaked on purpose (atomic reference counting cost about 5% of throughput, BENCHMARKS.md).
pub fn permanent(bytes: &[u8]) -> Bytes {
    Bytes::from_static(Box::leak(bytes.to_vec().into_boxed_slice()))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_sentinels_and_fills_them() {
        let json = serde_json::json!({
            "model": Slot::MODEL_SENTINEL,
            "usage": {"p": Slot::PROMPT_SENTINEL, "t": Slot::TOTAL_SENTINEL},
            "content": Slot::CONTENT_SENTINEL,
        });
        let template = Template::parse(json.to_string().as_bytes());
        let model = Bytes::from_static(b"gpt-4o");
        let content = Bytes::from_static(b"hi\\n");
        let fill = Fill {
            model: &model,
            content: &content,
            prompt_tokens: 12,
            completion_tokens: 3,
            sequence: 0,
            echo: &EMPTY,
        };
        let frame = template.fill(&fill);
        assert_eq!(
            String::from_utf8(frame.to_vec()).unwrap(),
            r#"{"content":"hi\n","model":"gpt-4o","usage":{"p":12,"t":15}}"#
        );
        assert_eq!(template.filled_len(&fill), frame.len());
    }

    #[test]
    fn a_template_larger_than_a_frame_fills_two_or_one_buffer() {
        // Seven slots: 15 pieces, more than one frame holds.
        let json = serde_json::json!([
            Slot::MODEL_SENTINEL,
            Slot::CONTENT_SENTINEL,
            Slot::PROMPT_SENTINEL,
            Slot::COMPLETION_SENTINEL,
            Slot::TOTAL_SENTINEL,
            Slot::SEQUENCE_SENTINEL,
            Slot::MODEL_SENTINEL,
        ]);
        let template = Template::parse(json.to_string().as_bytes());
        assert!(template.pieces() > crate::catalog::payload::MAX_PIECES);
        let model = Bytes::from_static(b"m");
        let content = Bytes::from_static(b"c");
        let fill = Fill {
            model: &model,
            content: &content,
            prompt_tokens: 1,
            completion_tokens: 2,
            sequence: 9,
            echo: &Bytes::new(),
        };
        let mut frames = crate::catalog::payload::Frames::default();
        template.fill_into(&mut frames, &fill);
        let mut text = frames.first.to_vec();
        text.extend(frames.second.expect("a second frame").to_vec());
        assert_eq!(String::from_utf8(text).unwrap(), r#"["m","c",1,2,3,9,"m"]"#);
        let mut out = bytes::BytesMut::new();
        template.fill_into(&mut out, &fill);
        assert_eq!(&out[..], br#"["m","c",1,2,3,9,"m"]"#);
        assert_eq!(template.filled_len(&fill), out.len());
    }

    #[test]
    fn a_filled_length_counts_every_slot_and_digit() {
        let json = serde_json::json!({
            "a": [Slot::MODEL_SENTINEL, Slot::MODEL_SENTINEL, Slot::CONTENT_SENTINEL],
            "n": [Slot::PROMPT_SENTINEL, Slot::COMPLETION_SENTINEL, Slot::TOTAL_SENTINEL],
            "s": Slot::SEQUENCE_SENTINEL,
        });
        let template = Template::parse(json.to_string().as_bytes());
        let model = Bytes::from_static(b"model-x");
        let content = Bytes::from_static(b"some text");
        for (prompt, completion, sequence) in [
            (0, 0, 0),
            (9, 1, 10),
            (99_999, 1, 123),
            (u32::MAX.into(), 7, 99),
        ] {
            let fill = Fill {
                model: &model,
                content: &content,
                prompt_tokens: prompt,
                completion_tokens: completion,
                sequence,
                echo: &EMPTY,
            };
            let mut out = bytes::BytesMut::new();
            template.fill_into(&mut out, &fill);
            assert_eq!(
                template.filled_len(&fill),
                out.len(),
                "{prompt} {completion} {sequence}"
            );
        }
    }
}
