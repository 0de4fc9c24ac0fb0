//! Whether a whole (not streamed) answer is a completion: well-formed JSON (RFC 8259) whose top
//! level is an object with no `error` (or a null one) and, when it has `choices` that are not
//! null, at least one choice, each an object. Other routes' answers (Messages, Responses,
//! Gemini, Bedrock, embeddings) have no `choices` and pass as any object without an error.
//!
//! Every whole answer of a run is checked, so the check is one pass over the bytes that builds
//! nothing and allocates nothing (but to read an escaped top-level key). serde_json skipping what it does not keep spent about 6,800
//! instructions on the mock's 424-byte chat completion, and the SIMD readers simd-json and
//! sonic-rs 5,900-6,200 (their set-up outweighs their speed at this size); this pass spends
//! about 4,200, strings scanned eight bytes a step. Its tests hold it to serde_json's reading
//! on generated and damaged bodies.

/// Objects and arrays nested more levels deep than this (the top-level object is one) are not
/// a completion.
const MAX_DEPTH: u32 = 128;

/// True for a completion (see the module's docs).
pub(crate) fn is_completion(body: &[u8]) -> bool {
    // JSON text is UTF-8; checked once here, a word at a time, so strings are scanned as bytes.
    if std::str::from_utf8(body).is_err() {
        return false;
    }
    let mut json = Json { bytes: body, at: 0 };
    json.top().unwrap_or(false) && {
        json.whitespace();
        json.at == body.len()
    }
}

/// Where in `rest` a string's scan stops: at its end (`"`), an escape (`\\`) or a control
/// character (not allowed unescaped). Eight bytes a step, as serde_json's own scan does: the
/// bytes are read as a word and each kind of stop found with the "has zero byte" and "has less
/// than" tests of Bit Twiddling Hacks, whose lowest hit is exact (a borrow runs only upward).
// Inlined, as `Json::string` is: a call for each of a body's strings cost 15% of the check.
#[inline(always)]
fn stop_in(rest: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero_byte = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut chunks = rest.chunks_exact(8);
    let mut at = 0;
    for chunk in chunks.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let stops = zero_byte(word ^ (ONES * u64::from(b'"')))
            | zero_byte(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
        if stops != 0 {
            return Some(at + stops.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = chunks.remainder();
    tail.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

/// A reader over a body; each method consumes one piece of JSON and returns `None` where the
/// bytes are not JSON.
struct Json<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Json<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// Consumes `byte`, after any whitespace.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// The top-level object: whether it is a completion. A repeated `error` or `choices` is
    /// judged by its last value, as a reader keeping the last of each key does.
    fn top(&mut self) -> Option<bool> {
        self.expect(b'{')?;
        let (mut error, mut no_choice) = (false, false);
        self.whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(true);
        }
        loop {
            self.whitespace();
            let (key, escaped) = self.string()?;
            self.expect(b':')?;
            self.whitespace();
            match Key::of(key, escaped)? {
                Key::Error => error = !self.null()?,
                Key::Choices => no_choice = !self.choices()?,
                Key::Other => self.value(1)?,
            }
            self.whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(!error && !no_choice);
                }
                _ => return None,
            }
        }
    }

    /// A value; true when it was `null`.
    fn null(&mut self) -> Option<bool> {
        if self.bytes[self.at..].starts_with(b"null") {
            self.at += 4;
            return Some(true);
        }
        self.value(1).map(|()| false)
    }

    /// `choices`' value: true when null, or an array of at least one choice, each an object.
    fn choices(&mut self) -> Option<bool> {
        if self.peek()? != b'[' {
            return self.null();
        }
        self.at += 1;
        self.whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(false);
        }
        let mut objects = true;
        loop {
            self.whitespace();
            objects &= self.peek()? == b'{';
            self.value(2)?;
            self.whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(objects);
                }
                _ => return None,
            }
        }
    }

    /// Any value, at nesting `depth` (the top-level object is 1).
    fn value(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.at..].starts_with(word).then(|| {
            self.at += word.len();
        })
    }

    // `top`, `choices`, `object` and `array` each write out the same comma-separated loop: one
    // loop taking each item as a closure measured 4% more instructions a whole chat request.
    fn object(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            self.string()?;
            self.expect(b':')?;
            self.whitespace();
            self.value(depth)?;
            self.whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.whitespace();
            self.value(depth)?;
            self.whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string, from its opening quote: its bytes between the quotes, escapes as written, and
    /// whether it has any.
    #[inline(always)]
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            self.at += stop_in(self.bytes.get(self.at..)?)?;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    let bytes: &'a [u8] = self.bytes;
                    return Some((&bytes[start..self.at - 1], escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// An escape, from its backslash.
    fn escape(&mut self) -> Option<()> {
        self.at += 1;
        match self.peek()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
            b'u' => {
                let hex = self.bytes.get(self.at + 1..self.at + 5)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                self.at += 5;
            }
            _ => return None,
        }
        Some(())
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    /// One digit or more.
    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
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
