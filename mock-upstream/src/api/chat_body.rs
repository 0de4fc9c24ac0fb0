//! A chat request's body read in one pass, without serde: the plain bodies benchmarks send.
//!
//! serde_json's derived reader spent about 2,900 instructions on a one-message chat request
//! (its per-field dispatch, a UTF-8 check per string, a raw value per `content`); this pass,
//! on the shared reader `gatebench_shared::wire::scan`, builds the same [`ChatRequest`] for a
//! fraction of that. It takes a body only when it can read it exactly as serde_json would, and
//! leaves every other body to serde (`None`), which also words the refusals: a key or model
//! with escapes, a field given twice, a number that is not a plain whole one, a content part
//! that is not an object, or anything that is not JSON. Its tests hold it to serde's reading
//! on generated and damaged bodies. A body equal to the thread's last one is read by one
//! comparison ([`read_seen`], in `chat_body/seen.rs`).

use std::borrow::Cow;

use gatebench_shared::wire::openai::{ChatRequest, MessagesScan, StreamOptions};
use gatebench_shared::wire::scan::Scan;

mod seen;

pub use seen::read_seen;

/// `body` as serde reads it into a [`ChatRequest`], or `None` to leave it to serde.
pub fn read(body: &[u8]) -> Option<ChatRequest<'_>> {
    let mut json = Scan::new(body)?;
    json.whitespace();
    let mut request = ChatRequest {
        model: None,
        messages: None,
        stream: None,
        stream_options: None,
        max_tokens: None,
        max_completion_tokens: None,
        n: None,
    };
    if json.open(b'{', b'}')? {
        let mut seen = 0u8;
        loop {
            let field = Field::of(plain_key(&mut json)?);
            // serde refuses a field given twice.
            let bit = 1 << field as u8;
            if field != Field::Other && seen & bit != 0 {
                return None;
            }
            seen |= bit;
            match field {
                Field::Model => {
                    request.model =
                        nullable(&mut json, |json| json.plain_string().map(Cow::Borrowed))?;
                }
                Field::Messages => request.messages = nullable(&mut json, messages)?,
                Field::Stream => request.stream = nullable(&mut json, Scan::boolean)?,
                Field::StreamOptions => {
                    request.stream_options = nullable(&mut json, stream_options)?;
                }
                Field::MaxTokens => request.max_tokens = nullable(&mut json, Scan::whole_number)?,
                Field::MaxCompletionTokens => {
                    request.max_completion_tokens = nullable(&mut json, Scan::whole_number)?;
                }
                Field::N => request.n = nullable(&mut json, Scan::whole_number)?,
                Field::Other => json.value(1)?,
            }
            if !json.more(b'}')? {
                break;
            }
        }
    }
    json.at_end().then_some(request)
}

/// The top-level keys [`ChatRequest`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Model,
    Messages,
    Stream,
    StreamOptions,
    MaxTokens,
    MaxCompletionTokens,
    N,
    Other,
}

impl Field {
    fn of(key: &[u8]) -> Field {
        match key {
            b"model" => Field::Model,
            b"messages" => Field::Messages,
            b"stream" => Field::Stream,
            b"stream_options" => Field::StreamOptions,
            b"max_tokens" => Field::MaxTokens,
            b"max_completion_tokens" => Field::MaxCompletionTokens,
            b"n" => Field::N,
            _ => Field::Other,
        }
    }
}

/// A key without escapes (serde reads escaped keys out; left to it).
#[inline]
fn plain_key<'a>(json: &mut Scan<'a>) -> Option<&'a [u8]> {
    match json.key()? {
        (key, false) => Some(key),
        (_, true) => None,
    }
}

/// An optional field's value: `null` is `None`, anything else is `read`.
#[inline]
fn nullable<'a, T>(
    json: &mut Scan<'a>,
    read: impl FnOnce(&mut Scan<'a>) -> Option<T>,
) -> Option<Option<T>> {
    if json.peek()? == b'n' {
        return json.null()?.then_some(None);
    }
    read(json).map(Some)
}

/// `messages`: an array of objects, counted with their text bytes.
fn messages(json: &mut Scan<'_>) -> Option<MessagesScan> {
    let mut scan = MessagesScan::default();
    if !json.open(b'[', b']')? {
        return Some(scan);
    }
    loop {
        scan.count += 1;
        scan.text_bytes += message(json)?;
        if !json.more(b']')? {
            return Some(scan);
        }
    }
}

/// One message's text bytes: those of its `content` (each `content`, if given twice).
fn message(json: &mut Scan<'_>) -> Option<u64> {
    let mut bytes = 0;
    if !json.open(b'{', b'}')? {
        return Some(0);
    }
    loop {
        if plain_key(json)? == b"content" {
            bytes += content(json)?;
        } else {
            json.value(3)?;
        }
        if !json.more(b'}')? {
            return Some(bytes);
        }
    }
}

/// A `content`'s text bytes: a string's as written between its quotes, the `text` of each part
/// of an array, and none for any other value.
fn content(json: &mut Scan<'_>) -> Option<u64> {
    match json.peek()? {
        b'"' => {
            let (text, _) = json.string()?;
            Some(text.len() as u64)
        }
        b'[' => parts(json),
        _ => json.value(3).map(|()| 0),
    }
}

/// An array of content parts, each an object: the bytes of each `text` as written, less two
/// (a string's quotes); a `null` text counts none.
fn parts(json: &mut Scan<'_>) -> Option<u64> {
    let mut bytes = 0;
    if !json.open(b'[', b']')? {
        return Some(0);
    }
    loop {
        if json.open(b'{', b'}')? {
            let mut seen = false;
            loop {
                if plain_key(json)? == b"text" {
                    if std::mem::replace(&mut seen, true) {
                        return None;
                    }
                    if json.peek()? == b'n' {
                        json.null()?.then_some(())?;
                    } else {
                        let start = json.at();
                        json.value(5)?;
                        bytes += (json.at() - start).saturating_sub(2) as u64;
                    }
                } else {
                    json.value(5)?;
                }
                if !json.more(b'}')? {
                    break;
                }
            }
        }
        if !json.more(b']')? {
            return Some(bytes);
        }
    }
}

/// `stream_options`: an object whose `include_usage` is kept.
fn stream_options(json: &mut Scan<'_>) -> Option<StreamOptions> {
    let mut options = StreamOptions {
        include_usage: None,
    };
    if !json.open(b'{', b'}')? {
        return Some(options);
    }
    let mut seen = false;
    loop {
        if plain_key(json)? == b"include_usage" {
            if std::mem::replace(&mut seen, true) {
                return None;
            }
            options.include_usage = nullable(json, Scan::boolean)?;
        } else {
            json.value(2)?;
        }
        if !json.more(b'}')? {
            return Some(options);
        }
    }
}

#[cfg(test)]
mod tests;
