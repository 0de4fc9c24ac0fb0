//! What an arrival's record reads off its request body: the user it names, kept in a
//! fixed-size value so recording does not allocate.

/// Most bytes of a user kept.
pub const USER_BYTES: usize = 64;

/// A user name of at most [`USER_BYTES`] bytes, inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UserId {
    /// Bytes used; `u8::MAX` for none.
    len: u8,
    bytes: [u8; USER_BYTES],
}

impl UserId {
    pub const NONE: UserId = UserId {
        len: u8::MAX,
        bytes: [0; USER_BYTES],
    };

    /// `user`, cut to [`USER_BYTES`] at a character boundary.
    pub fn new(user: &str) -> UserId {
        let mut end = user.len().min(USER_BYTES);
        while !user.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; USER_BYTES];
        bytes[..end].copy_from_slice(&user.as_bytes()[..end]);
        UserId {
            len: end as u8,
            bytes,
        }
    }

    pub fn get(&self) -> Option<&str> {
        let len = usize::from(self.len);
        // Invariant: `new` keeps whole characters only.
        (len <= USER_BYTES).then(|| std::str::from_utf8(&self.bytes[..len]).unwrap_or(""))
    }
}

impl Default for UserId {
    fn default() -> Self {
        UserId::NONE
    }
}

impl std::fmt::Debug for UserId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// The user a request body names (OpenAI's top-level `user`, else Anthropic's
/// `metadata.user_id`). Found by skipping over the body's other values (a parse through serde
/// would allocate for nested values it skips); only when recording.
pub fn user_in_body(body: &[u8]) -> UserId {
    let user = field(body, b"user").or_else(|| {
        let metadata = field(body, b"metadata")?;
        field(metadata, b"user_id")
    });
    match user.and_then(|raw| string_value(raw, UserId::new)) {
        Some(user) => user,
        None => UserId::NONE,
    }
}

/// `f` of the JSON string `raw` (quotes included): borrowed when it has no escapes, else
/// decoded (which allocates: rare).
fn string_value<T>(raw: &[u8], f: impl FnOnce(&str) -> T) -> Option<T> {
    let inner = raw.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner).ok().map(f);
    }
    serde_json::from_slice::<String>(raw).ok().map(|s| f(&s))
}

/// The raw value of `key` among the members of the JSON object `object`, if it has it. Keys
/// are compared as written (a key with escapes does not match).
fn field<'a>(object: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let mut at = skip_space(object, 0);
    if object.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(object, at + 1);
    if object.get(at) == Some(&b'}') {
        return None;
    }
    loop {
        let key_end = string_end(object, at)?;
        let name = &object[at + 1..key_end - 1];
        at = skip_space(object, key_end);
        if object.get(at) != Some(&b':') {
            return None;
        }
        let value = skip_space(object, at + 1);
        let value_end = value_end(object, value)?;
        if name == key {
            return Some(&object[value..value_end]);
        }
        at = skip_space(object, value_end);
        match object.get(at) {
            Some(b',') => at = skip_space(object, at + 1),
            _ => return None,
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index just past the JSON string that opens at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the JSON value that starts at `at`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                .unwrap_or(bytes.len() - at);
            (len > 0).then_some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_read_from_either_field_and_cut_to_64_bytes() {
        let user = |body: &str| user_in_body(body.as_bytes()).get().map(str::to_string);
        assert_eq!(
            user(r#"{"model":"m","user":"alice"}"#).as_deref(),
            Some("alice")
        );
        assert_eq!(
            user(r#"{"metadata":{"user_id":"bob"},"messages":[]}"#).as_deref(),
            Some("bob")
        );
        assert_eq!(user(r#"{"user":"a\"b"}"#).as_deref(), Some("a\"b"));
        assert_eq!(user(r#"{"model":"m"}"#), None);
        assert_eq!(user("not json"), None);
        assert_eq!(user(r#"{"user":7}"#), None);
        let long = format!(r#"{{"user":"{}é"}}"#, "x".repeat(63));
        assert_eq!(user(&long).unwrap().len(), 63);
        assert_eq!(UserId::new("").get(), Some(""));
        // Other values are skipped whole, nested strings and brackets included.
        assert_eq!(
            user(r#" { "messages": [{"content": "a \"user\": ] }"}], "n": 1, "x": {"user": "no"}, "user" : "yes" }"#)
                .as_deref(),
            Some("yes")
        );
        assert_eq!(user(r#"{"metadata": {"user_id": 5}}"#), None);
        for broken in [
            r#"{"user""#,
            r#"{"a": [1, "user": "x"#,
            "{",
            "",
            r#"{"a" 1}"#,
        ] {
            assert_eq!(user(broken), None, "{broken}");
        }
    }
}
