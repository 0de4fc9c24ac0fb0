//! A conversation's body in pieces written once: each message's JSON when it is first sent,
//! and the body's other fields once for each output cap. The next body is then a copy of
//! those pieces, not the whole history serialised again, and its prompt's size a sum of sizes
//! counted once, not the body read back.
//!
//! The pieces are byte for byte what serialising the whole body writes (serde_json's compact
//! form: `{"key":value,...}`, `[item,...]`), so a body built either way is the same bytes.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Map, Value};

use crate::generator::corpus::{text_bytes, PROMPT_FIELDS};

/// The messages written so far, joined by commas, and where each ends.
#[derive(Debug, Clone, Default)]
pub(super) struct Messages {
    /// `m0,m1,…` without brackets: the first `ends.len()` messages.
    joined: Vec<u8>,
    /// For each message, where its JSON ends in `joined` and the prompt text bytes of it and
    /// the messages before it.
    ends: Vec<(usize, usize)>,
}

impl Messages {
    /// Forgets message `from` and those after it (they changed since they were written).
    pub(super) fn forget_from(&mut self, from: usize) {
        if from < self.ends.len() {
            self.ends.truncate(from);
            self.joined.truncate(self.first(from).0.len());
        }
    }

    /// Writes the messages of `messages` not written yet.
    pub(super) fn catch_up(&mut self, messages: &[Value]) {
        for message in &messages[self.ends.len().min(messages.len())..] {
            let text_before = self.first(self.ends.len()).1;
            if !self.ends.is_empty() {
                self.joined.push(b',');
            }
            write(&mut self.joined, message);
            self.ends
                .push((self.joined.len(), text_before + text_bytes(message)));
        }
    }

    /// The JSON of the first `n` written messages, joined, and their prompt text bytes.
    pub(super) fn first(&self, n: usize) -> (&[u8], usize) {
        match n.checked_sub(1).and_then(|last| self.ends.get(last)) {
            Some(&(end, text)) => (&self.joined[..end], text),
            None => (&[], 0),
        }
    }
}

/// The body's fields but the conversation, written for one output cap: the JSON before the
/// conversation's array and after it, and the prompt text they hold.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    /// The output cap it was written for.
    pub(super) max_tokens: Option<u32>,
    head: Vec<u8>,
    tail: Vec<u8>,
    text_bytes: usize,
}

impl Frame {
    /// `fields` (the body without its conversation) written around the conversation's `key`,
    /// in the place serialising the whole body puts it.
    pub(super) fn new(max_tokens: Option<u32>, fields: &Map<String, Value>, key: &str) -> Frame {
        let mut body = fields.clone();
        body.insert(key.into(), Value::Null);
        let (mut head, mut tail) = (vec![b'{'], Vec::new());
        let mut text = 0;
        let mut after = false;
        for (i, (name, value)) in body.iter().enumerate() {
            let out = if after { &mut tail } else { &mut head };
            if i > 0 {
                out.push(b',');
            }
            write(out, name);
            out.push(b':');
            if name == key {
                after = true;
                continue;
            }
            write(out, value);
            if PROMPT_FIELDS.contains(&name.as_str()) {
                text += text_bytes(value);
            }
        }
        tail.push(b'}');
        Frame {
            max_tokens,
            head,
            tail,
            text_bytes: text,
        }
    }

    /// The body with `messages` (JSON items joined by commas) as its conversation, written in
    /// `buffer`: in the allocation of the body before it when that one has been dropped (a
    /// history of 32k tokens is a body of 128 KiB, which a fresh allocation would fault in
    /// page by page).
    pub(super) fn body(&self, messages: &[&[u8]], buffer: &mut BytesMut) -> Bytes {
        let length: usize = messages.iter().map(|m| m.len() + 1).sum();
        buffer.clear();
        buffer.reserve(self.head.len() + length + 2 + self.tail.len());
        buffer.extend_from_slice(&self.head);
        buffer.put_u8(b'[');
        for (i, part) in messages.iter().filter(|m| !m.is_empty()).enumerate() {
            if i > 0 {
                buffer.put_u8(b',');
            }
            buffer.extend_from_slice(part);
        }
        buffer.put_u8(b']');
        buffer.extend_from_slice(&self.tail);
        buffer.split().freeze()
    }

    /// The prompt text bytes of the fields but the conversation.
    pub(super) fn text_bytes(&self) -> usize {
        self.text_bytes
    }
}

/// Appends `value` in JSON's compact form.
pub(super) fn write<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Invariant: JSON values and strings always serialise, and a Vec takes every write.
    serde_json::to_writer(out, value).expect("a JSON value serialises");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_body_in_pieces_is_the_bytes_of_the_whole_body() {
        let fields = json!({"model": "m", "system": "Be brief.", "stream": true, "z": [1]});
        let fields = fields.as_object().unwrap();
        let messages = [
            json!({"role": "user", "content": "one"}),
            json!({"role": "assistant", "content": "first \"quoted\""}),
            json!({"role": "user", "content": "two"}),
        ];
        let mut written = Messages::default();
        written.catch_up(&messages[..2]);
        written.catch_up(&messages);
        let frame = Frame::new(None, fields, "messages");
        let (joined, text) = written.first(3);
        let mut whole = fields.clone();
        whole.insert("messages".into(), Value::Array(messages.to_vec()));
        let mut buffer = BytesMut::new();
        let body = frame.body(&[joined], &mut buffer);
        assert_eq!(body, serde_json::to_vec(&whole).unwrap());
        // Once that body is dropped, the next one is written in its allocation.
        let at = body.as_ptr();
        drop(body);
        assert_eq!(frame.body(&[joined], &mut buffer).as_ptr(), at);
        assert_eq!(text + frame.text_bytes(), 3 + 14 + 3 + 9);
        // The last one changed: written again from it.
        written.forget_from(2);
        assert_eq!(written.first(2).0, joined_of(&messages[..2]));
        assert_eq!(written.first(3), (&b""[..], 0));
        written.catch_up(&messages);
        assert_eq!(written.first(3).0, joined_of(&messages));
        // No messages, and an empty piece among others.
        assert_eq!(
            frame.body(&[], &mut buffer),
            &br#"{"messages":[],"model":"m","stream":true,"system":"Be brief.","z":[1]}"#[..]
        );
        assert_eq!(
            frame.body(&[b"", b"1"], &mut buffer),
            frame.body(&[b"1"], &mut buffer)
        );
    }

    fn joined_of(messages: &[Value]) -> Vec<u8> {
        let all = serde_json::to_vec(&messages).unwrap();
        all[1..all.len() - 1].to_vec()
    }
}
