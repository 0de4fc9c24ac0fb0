//! A one-pass reader of JSON text (RFC 8259) for the few hot places that read a body without
//! building it: loadgen's check of every whole answer, the mock's reading of a chat request.
//! It builds nothing and allocates nothing; each method consumes one piece of JSON and returns
//! `None` where the bytes are not JSON. Strings are scanned eight bytes a step, once the whole
//! text has been checked to be UTF-8.
//!
//! What it accepts is what serde_json accepts when it skips a value: any `\uXXXX` escape of
//! four hex digits (a lone surrogate too, as serde_json's skipping does), numbers by the RFC's
//! grammar (not their size); but objects and arrays nested at most [`MAX_DEPTH`] levels, where
//! serde_json's skipping has no limit (its typed reading stops at 128).

/// Objects and arrays nested more levels deep than this (a top-level one is level 1) are
/// refused.
pub const MAX_DEPTH: u32 = 128;

/// A reader over JSON text, at a position in it.
#[derive(Debug)]
pub struct Scan<'a> {
    bytes: &'a [u8],
    /// The same bytes as text, to lend strings out without checking them again.
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    /// A reader at the start of `bytes`; `None` when they are not UTF-8 (JSON text is; checked
    /// once here, a word at a time, so strings are scanned as bytes).
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Option<Scan<'a>> {
        let text = std::str::from_utf8(bytes).ok()?;
        Some(Scan { bytes, text, at: 0 })
    }

    /// The position: bytes read so far.
    #[inline]
    pub fn at(&self) -> usize {
        self.at
    }

    /// A string without escapes, as text; `None` for any other value or a string with escapes.
    #[inline]
    pub fn plain_string(&mut self) -> Option<&'a str> {
        let start = self.at + 1;
        match self.string()? {
            // Between two quotes, so on character boundaries of text checked by `new`.
            (_, false) => self.text.get(start..self.at - 1),
            (_, true) => None,
        }
    }

    /// The next byte, not consumed.
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Consumes whitespace.
    #[inline]
    pub fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// Consumes `byte`, after any whitespace.
    #[inline]
    pub fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// True when nothing but whitespace is left.
    #[inline]
    pub fn at_end(&mut self) -> bool {
        self.whitespace();
        self.at == self.bytes.len()
    }

    /// Consumes an object's or array's opening byte `open` and the whitespace after it; false
    /// when `close` follows at once (the empty object or array, consumed too).
    #[inline]
    pub fn open(&mut self, open: u8, close: u8) -> Option<bool> {
        (self.peek()? == open).then_some(())?;
        self.at += 1;
        self.whitespace();
        if self.peek()? == close {
            self.at += 1;
            return Some(false);
        }
        Some(true)
    }

    /// After an item of an object or array: true for a comma (another item follows, whitespace
    /// consumed), false for `close` (the end, consumed).
    #[inline]
    pub fn more(&mut self, close: u8) -> Option<bool> {
        self.whitespace();
        match self.peek()? {
            b',' => {
                self.at += 1;
                self.whitespace();
                Some(true)
            }
            b if b == close => {
                self.at += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// An object's key and its colon: the key's bytes as written, and whether it has escapes.
    #[inline(always)]
    pub fn key(&mut self) -> Option<(&'a [u8], bool)> {
        let key = self.string()?;
        self.expect(b':')?;
        self.whitespace();
        Some(key)
    }

    /// A value; true when it was `null`. Any other value is skipped as a value of a top-level
    /// object or array (nesting counted from level 1): call it there, or after peeking `n`.
    #[inline]
    pub fn null(&mut self) -> Option<bool> {
        if self.bytes[self.at..].starts_with(b"null") {
            self.at += 4;
            return Some(true);
        }
        self.value(1).map(|()| false)
    }

    /// `true` or `false`.
    #[inline]
    pub fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => None,
        }
    }

    /// A whole number that fits `u64` in every reading: `0`, or up to 19 digits without a
    /// leading zero, followed by no fraction or exponent. `None` for any other number, which the
    /// caller leaves to a full parser.
    #[inline]
    pub fn whole_number(&mut self) -> Option<u64> {
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            if self.at - start == 19 {
                return None;
            }
            n = n * 10 + u64::from(digit - b'0');
            self.at += 1;
        }
        let digits = self.at - start;
        let plain = digits == 1 || (digits > 1 && self.bytes[start] != b'0');
        (plain && !matches!(self.peek(), Some(b'.' | b'e' | b'E'))).then_some(n)
    }

    /// Any value, at nesting `depth` (the object or array holding it is at `depth`).
    pub fn value(&mut self, depth: u32) -> Option<()> {
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

    // `object` and `array` each write out the comma-separated loop rather than call `more`:
    // measured in loadgen's check of whole answers, a shared loop cost 4% more instructions.
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
    // Inlined: a call for each of a body's strings cost 15% of loadgen's check.
    #[inline(always)]
    pub fn string(&mut self) -> Option<(&'a [u8], bool)> {
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

/// Where in `rest` a string's scan stops: at its end (`"`), an escape (`\\`) or a control
/// character (not allowed unescaped). Eight bytes a step, as serde_json's own scan does: the
/// bytes are read as a word and each kind of stop found with the "has zero byte" and "has less
/// than" tests of Bit Twiddling Hacks, whose lowest hit is exact (a borrow runs only upward).
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

#[cfg(test)]
mod tests;
