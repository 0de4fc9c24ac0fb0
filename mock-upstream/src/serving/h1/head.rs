//! One request head, parsed with `httparse`, and the decision whether the mock's own HTTP/1.1
//! server answers it or hands the connection to hyper; a head that repeats the thread's last
//! one is read by one comparison ([`parse_seen`]).
//!
//! The own server takes the requests every benchmark sends: HTTP/1.1, a `content-length` body
//! (or none) within `--max-body`, no `transfer-encoding`, `expect` or `upgrade`, at most
//! [`MAX_HEADERS`] headers in at most [`MAX_HEAD_BYTES`]. Anything else (including every head
//! that does not parse) goes to hyper, which answers it, its errors included, as it always
//! has.

use std::cell::RefCell;
use std::ops::Range;

use bytes::Bytes;
use gatebench_shared::memo::Memo;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Version};

use super::target::Target;

/// Most headers a request served here may have (hyper takes up to 100).
pub const MAX_HEADERS: usize = 48;

/// Largest request head served here (hyper takes up to about 400 KiB).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// What the bytes read so far hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Not a whole head yet.
    Partial,
    /// A head the own server answers, in the [`Head`] given to [`parse`].
    Ready,
    /// A head (or garbage) for hyper.
    HandOff,
}

/// A parsed head: where its parts lie in the bytes it was parsed from. A connection keeps one
/// and each head is parsed into it: returned, its 400 bytes were copied twice a request.
#[derive(Debug, Clone)]
pub struct Head {
    /// Bytes of the head, up to and including the blank line.
    pub len: usize,
    /// Bytes of the body that follows.
    pub body_len: usize,
    /// The connection may serve another request after this one.
    pub keep_alive: bool,
    pub method: Method,
    path: Span,
    /// Name and value of each header (kept small: a head is moved a few times).
    headers: [(Span, Span); MAX_HEADERS],
    count: usize,
}

/// Where a part of the head lies in it (a head is at most [`MAX_HEAD_BYTES`]).
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: u16,
    end: u16,
}

impl Span {
    fn range(self) -> Range<usize> {
        usize::from(self.start)..usize::from(self.end)
    }
}

impl Default for Head {
    fn default() -> Head {
        Head {
            len: 0,
            body_len: 0,
            keep_alive: false,
            method: Method::GET,
            path: Span::default(),
            headers: [(Span::default(), Span::default()); MAX_HEADERS],
            count: 0,
        }
    }
}

/// The largest head whose reading is kept for the next request.
const MOST_KEPT: usize = 4 << 10;

thread_local! {
    /// This thread's last head served here and read in full: its bytes, what they said, and
    /// the `--max-body` it was read under.
    static LAST: RefCell<Memo<(Head, u64)>> = const { RefCell::new(Memo::new()) };
}

/// [`parse`], by one comparison when `buf` starts with this thread's last head read in full.
///
/// A benchmark's client sends one head again and again (wrk, oha, an SDK in a loop).
/// `httparse` decides where a head ends and what it says from its bytes up to that end alone,
/// so a buffer that starts with the same bytes holds the same head. Reading oha's request head
/// cost about 1,700 instructions; a repeated one costs a comparison and a copy of the parts
/// kept. A head that differs is read in full, plus a comparison that stops at the first
/// differing byte and a copy of its bytes, until heads are seen to differ every time
/// (`gatebench_shared::memo`): loadgen's do, since each carries its sequence number.
pub fn parse_seen(buf: &[u8], max_body: u64, head: &mut Head) -> Parsed {
    LAST.with_borrow_mut(|last| {
        let same = |kept: &[u8], (_, max): &(Head, u64)| *max == max_body && buf.starts_with(kept);
        if let Some(((seen, _), _)) = last.seen(same) {
            head.copy_from(seen);
            return Parsed::Ready;
        }
        let parsed = parse(buf, max_body, head);
        if parsed == Parsed::Ready {
            last.keep(&buf[..head.len], &(head.clone(), max_body), MOST_KEPT);
        }
        parsed
    })
}

/// Parses the head at the start of `buf` into `head` (whose contents mean nothing unless this
/// says [`Parsed::Ready`]). `max_body` is `--max-body`: a larger declared body goes to hyper,
/// which answers 413.
pub fn parse(buf: &[u8], max_body: u64, head: &mut Head) -> Parsed {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD_BYTES => return Parsed::Partial,
        _ => return Parsed::HandOff,
    };
    if len > MAX_HEAD_BYTES || req.version != Some(1) {
        return Parsed::HandOff;
    }
    let (Some(method), Some(path)) = (req.method, req.path) else {
        return Parsed::HandOff;
    };
    let Ok(method) = Method::from_bytes(method.as_bytes()) else {
        return Parsed::HandOff;
    };
    if method == Method::CONNECT || !path.starts_with('/') {
        return Parsed::HandOff;
    }
    let mut body_len: Option<u64> = None;
    let mut keep_alive = true;
    let count = req.headers.len();
    for (slot, header) in head.headers.iter_mut().zip(req.headers.iter()) {
        let name = header.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let Some(n) = parse_length(header.value) else {
                return Parsed::HandOff;
            };
            if body_len.is_some_and(|seen| seen != n) {
                return Parsed::HandOff;
            }
            body_len = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding")
            || name.eq_ignore_ascii_case(b"expect")
            || name.eq_ignore_ascii_case(b"upgrade")
        {
            return Parsed::HandOff;
        } else if name.eq_ignore_ascii_case(b"connection") {
            if has_token(header.value, b"upgrade") {
                return Parsed::HandOff;
            }
            keep_alive &= !has_token(header.value, b"close");
        }
        *slot = (range_in(buf, name), range_in(buf, header.value));
    }
    let body_len = body_len.unwrap_or(0);
    if body_len > max_body {
        return Parsed::HandOff;
    }
    head.len = len;
    head.body_len = body_len as usize;
    head.keep_alive = keep_alive;
    head.method = method;
    head.path = range_in(buf, path.as_bytes());
    head.count = count;
    Parsed::Ready
}

impl Head {
    /// Becomes `other`: its fields and the spans of its headers, not the unused slots.
    fn copy_from(&mut self, other: &Head) {
        self.len = other.len;
        self.body_len = other.body_len;
        self.keep_alive = other.keep_alive;
        self.method.clone_from(&other.method);
        self.path = other.path;
        self.count = other.count;
        self.headers[..other.count].copy_from_slice(&other.headers[..other.count]);
    }

    /// The request, its parts shared with `head` (the bytes the head was parsed from, frozen),
    /// its target kept by the connection when it is the one kept; or `None` when its target is
    /// not a valid URI or a header value is not a valid value.
    pub fn request<B>(&self, head: &Bytes, body: B, target: &mut Target) -> Option<Request<B>> {
        let path = self.path.range();
        let uri = target.uri(&head[path.clone()], || head.slice(path))?;
        let mut request = Request::new(body);
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = uri;
        *request.version_mut() = Version::HTTP_11;
        // Filled in place: a map built aside and moved in cost a copy and the empty one's drop.
        let headers = request.headers_mut();
        for (name, value) in &self.headers[..self.count] {
            // Only what the routes read (see `acted_on`): the rest would cost a map entry each.
            if !crate::admission::request::acted_on(&head[name.range()]) {
                continue;
            }
            let name = HeaderName::from_bytes(&head[name.range()]).ok()?;
            let value = HeaderValue::from_maybe_shared(head.slice(value.range())).ok()?;
            headers.append(name, value);
        }
        Some(request)
    }
}

/// Where `part`, a slice of the head at the start of `buf`, lies in it.
fn range_in(buf: &[u8], part: &[u8]) -> Span {
    let start = part.as_ptr() as usize - buf.as_ptr() as usize;
    Span {
        start: start as u16,
        end: (start + part.len()) as u16,
    }
}

/// A `content-length` value: digits only, as RFC 9110 has it.
fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        value
            .iter()
            .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0')),
    )
}

/// True when the comma-separated `value` holds `token` (ASCII case ignored).
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|b| *b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(text: &str) -> Head {
        let mut head = Head::default();
        match parse(text.as_bytes(), 1 << 20, &mut head) {
            Parsed::Ready => head,
            other => panic!("{other:?} for {text:?}"),
        }
    }

    fn handed_off(text: &str) -> bool {
        parse(text.as_bytes(), 1 << 20, &mut Head::default()) == Parsed::HandOff
    }

    #[test]
    fn a_benchmark_request_is_served_here() {
        let text = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\
                    X-Mock-Tokens: 4\r\n\r\n{\"model\":1}";
        let head = ready(text);
        assert_eq!(head.len, text.len() - 11);
        assert_eq!(head.body_len, 12);
        assert!(head.keep_alive);
        let bytes = Bytes::copy_from_slice(text.as_bytes());
        let req = head.request(&bytes, (), &mut Target::default()).unwrap();
        assert_eq!(req.method(), Method::POST);
        assert_eq!(req.uri().path(), "/v1/chat/completions");
        assert_eq!(req.headers()["x-mock-tokens"], "4");
        // Only the headers the routes act on are in the map.
        assert!(!req.headers().contains_key("host"));
        assert_eq!(req.headers().len(), 1);
    }

    #[test]
    fn a_head_cut_short_waits_for_more() {
        let mut head = Head::default();
        let cut = b"GET /health HTTP/1.1\r\nHost:";
        assert_eq!(parse(cut, 100, &mut head), Parsed::Partial);
        assert_eq!(parse(b"", 100, &mut head), Parsed::Partial);
    }

    #[test]
    fn connection_close_ends_the_connection() {
        assert!(!ready("GET /health HTTP/1.1\r\nConnection: Keep-Alive, Close\r\n\r\n").keep_alive);
    }

    #[test]
    fn whatever_hyper_must_answer_is_handed_to_it() {
        for text in [
            "GET /health HTTP/1.0\r\n\r\n",
            "POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST /v1/chat/completions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
            "GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +2\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n",
            "GET http://example.com/ HTTP/1.1\r\n\r\n",
            "CONNECT x:443 HTTP/1.1\r\n\r\n",
            "GARBAGE\r\n\r\n",
        ] {
            assert!(handed_off(text), "{text:?}");
        }
        let many: String = (0..MAX_HEADERS + 1)
            .map(|i| format!("x-{i}: 1\r\n"))
            .collect();
        assert!(handed_off(&format!("GET / HTTP/1.1\r\n{many}\r\n")));
        let long = "x".repeat(MAX_HEAD_BYTES);
        assert!(handed_off(&format!("GET / HTTP/1.1\r\nx: {long}")));
    }

    /// What a parse said, in a form to compare: the outcome and, when ready, the head's fields
    /// and header spans.
    fn said(parsed: Parsed, head: &Head) -> String {
        if parsed != Parsed::Ready {
            return format!("{parsed:?}");
        }
        let spans: Vec<_> = head.headers[..head.count]
            .iter()
            .map(|(n, v)| (n.range(), v.range()))
            .collect();
        format!(
            "{} {} {} {} {:?} {spans:?}",
            head.len,
            head.body_len,
            head.keep_alive,
            head.method,
            head.path.range()
        )
    }

    #[test]
    fn a_kept_head_reads_every_buffer_as_a_full_parse_does() {
        let chat = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n";
        let other = "POST /v1/chat/completions HTTP/1.1\r\nHost: y\r\nContent-Length: 2\r\n\r\n";
        let longer =
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nA: b\r\n\r\n";
        let close = "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n";
        let mut buffers: Vec<(String, u64)> = Vec::new();
        // Repeats with bodies and a pipelined head behind, then heads that share a prefix with
        // the kept one, a partial head, one for hyper, and a smaller --max-body.
        for _ in 0..3 {
            buffers.push((format!("{chat}{{}}"), 100));
            buffers.push((format!("{chat}{{}}{close}"), 100));
        }
        // Each right after `chat`, so it is compared with `chat`'s kept bytes: another head,
        // one that goes on past `chat`'s last header, `chat` cut short before its blank line.
        for text in [
            other,
            chat,
            longer,
            chat,
            &chat[..chat.len() - 2],
            close,
            chat,
            chat,
        ] {
            buffers.push((text.to_string(), 100));
        }
        buffers.push((format!("{chat}{{}}"), 1));
        buffers.push((format!("{chat}{{}}"), 100));
        buffers.push((
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".into(),
            100,
        ));
        // Heads that differ every time (a sequence number in each) until the kept reading
        // backs off, then the first head again: seen again within a round.
        for i in 0..600 {
            buffers.push((format!("GET /h HTTP/1.1\r\nx-seq: {i}\r\n\r\n"), 100));
        }
        for _ in 0..300 {
            buffers.push((chat.to_string(), 100));
        }
        let mut kept = Head::default();
        for (i, (text, max_body)) in buffers.iter().enumerate() {
            let mut fresh = Head::default();
            let want = parse(text.as_bytes(), *max_body, &mut fresh);
            let want = said(want, &fresh);
            let got = parse_seen(text.as_bytes(), *max_body, &mut kept);
            assert_eq!(said(got, &kept), want, "buffer {i}: {text:?}");
        }
        // The last repeats were served from the kept reading (a reading that never matched
        // would have given up comparing long before).
        let hit =
            LAST.with_borrow_mut(|last| last.seen(|kept, _| kept == chat.as_bytes()).is_some());
        assert!(hit);
    }

    #[test]
    fn a_repeated_equal_length_is_accepted() {
        assert_eq!(
            ready("POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n").body_len,
            2
        );
    }
}
