//! Whether a whole (not streamed) answer is a completion: well-formed JSON (RFC 8259) whose top
//! level is an object with no `error` (or a null one) and, when it has `choices` that are not
//! null, at least one choice, each an object. Other routes' answers (Messages, Responses,
//! Gemini, Bedrock, embeddings) have no `choices` and pass as any object without an error.
//!
//! Every whole answer of a run is checked, so the check is one pass over the bytes that builds
//! nothing and allocates nothing (but to read an escaped top-level key), on the shared reader
//! `gatebench_shared::wire::scan`. serde_json skipping what it does not keep spent about 6,800
//! instructions on the mock's 424-byte chat completion, and the SIMD readers simd-json and
//! sonic-rs 5,900-6,200 (their set-up outweighs their speed at this size); this pass spends
//! about 4,200. Its tests hold it to serde_json's reading on generated and damaged bodies.
//!
//! A target serving one fixed answer (the mock, or nginx, and a gateway passing either on) sends
//! the same bytes every time, and the same bytes get the same verdict: `is_completion_seen`
//! keeps each thread's last body and its verdict, and judges a body equal to it by one
//! comparison (about 50 instructions against 3,300 for nginx's 281-byte completion). A body that
//! differs is read in full, as before, and once bodies differ every time most are not
//! compared (`gatebench_shared::memo`).

use gatebench_shared::memo::Memo;
use gatebench_shared::wire::scan::Scan;
use std::cell::RefCell;

/// The largest body whose verdict is kept: a comparison and a copy stay far below the pass
/// they spare.
const MOST_KEPT: usize = 16 << 10;

thread_local! {
    /// This thread's last body read in full, and its verdict.
    static LAST: RefCell<Memo<bool>> = const { RefCell::new(Memo::new()) };
}

/// `is_completion(body)`, by one comparison when `body` is this thread's last body read in full.
pub(crate) fn is_completion_seen(body: &[u8]) -> bool {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((verdict, _)) = last.seen(|kept, _| kept == body) {
            return *verdict;
        }
        let verdict = is_completion(body);
        last.keep(body, &verdict, MOST_KEPT);
        verdict
    })
}

/// True for a completion (see the module's docs).
pub(crate) fn is_completion(body: &[u8]) -> bool {
    let Some(mut json) = Scan::new(body) else {
        return false;
    };
    top(&mut json).unwrap_or(false) && json.at_end()
}

/// The top-level object: whether it is a completion. A repeated `error` or `choices` is judged
/// by its last value, as a reader keeping the last of each key does.
fn top(json: &mut Scan<'_>) -> Option<bool> {
    json.whitespace();
    if !json.open(b'{', b'}')? {
        return Some(true);
    }
    let (mut error, mut no_choice) = (false, false);
    loop {
        let (key, escaped) = json.key()?;
        match Key::of(key, escaped)? {
            Key::Error => error = !json.null()?,
            Key::Choices => no_choice = !choices(json)?,
            Key::Other => json.value(1)?,
        }
        if !json.more(b'}')? {
            return Some(!error && !no_choice);
        }
    }
}

/// `choices`' value: true when null, or an array of at least one choice, each an object.
fn choices(json: &mut Scan<'_>) -> Option<bool> {
    if json.peek()? != b'[' {
        return json.null();
    }
    if !json.open(b'[', b']')? {
        return Some(false);
    }
    let mut objects = true;
    loop {
        objects &= json.peek()? == b'{';
        json.value(2)?;
        if !json.more(b']')? {
            return Some(objects);
        }
    }
}

/// A top-level key, as the check reads it.
enum Key {
    Error,
    Choices,
    Other,
}

impl Key {
    /// The key of a string's bytes as written; escapes are read out (rare in keys), and a key
    /// whose escapes do not make text (a lone surrogate) is refused, as serde_json refuses it.
    fn of(raw: &[u8], escaped: bool) -> Option<Key> {
        let of = |text: &[u8]| match text {
            b"error" => Key::Error,
            b"choices" => Key::Choices,
            _ => Key::Other,
        };
        if !escaped {
            return Some(of(raw));
        }
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        let text: String = serde_json::from_slice(&quoted).ok()?;
        Some(of(text.as_bytes()))
    }
}

#[cfg(test)]
mod tests;
