//! Writing an answer as HTTP/1.1 bytes: the status line and headers as hyper writes them
//! (lower-case names, `content-length` for a body of known size, `transfer-encoding: chunked`
//! otherwise, `date` cached per second, `connection: close` on the last answer), and chunk
//! framing for streams.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{BufMut, BytesMut};
use hyper::header::{CONNECTION, CONTENT_LENGTH, DATE, TRANSFER_ENCODING};
use hyper::{HeaderMap, StatusCode};

use crate::catalog::payload::{put_chunk_size, put_decimal};
use crate::catalog::{put_header, Catalog, FixedHeaders};

/// How the body after a head is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `content-length: N`, then N bytes.
    Length(u64),
    /// Chunks, ended by a zero-length one.
    Chunked,
    /// No body at all (204 and 304).
    None,
}

/// The framing of a body of `exact` bytes (or unknown size) under `status`.
pub fn framing(status: StatusCode, exact: Option<u64>) -> Framing {
    if status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED {
        return Framing::None;
    }
    match exact {
        Some(n) => Framing::Length(n),
        None => Framing::Chunked,
    }
}

/// Appends the status line and headers to `out`: the fixed set `fixed` (pre-encoded) first,
/// then what `stamp` writes, then `headers`. Returns whether the connection stays open:
/// `keep_alive`, unless the answer itself says `connection: close`.
pub fn head(
    out: &mut BytesMut,
    status: StatusCode,
    fixed: Option<(&Catalog, FixedHeaders)>,
    stamp: impl FnOnce(&mut BytesMut),
    headers: &HeaderMap,
    framing: Framing,
    keep_alive: bool,
) -> bool {
    out.put_slice(b"HTTP/1.1 ");
    out.put_slice(status.as_str().as_bytes());
    out.put_u8(b' ');
    out.put_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.put_slice(b"\r\n");
    if let Some((catalog, fixed)) = fixed {
        catalog.put_fixed(fixed, out);
    }
    stamp(out);
    // Closing anyway: the answer's own `connection` headers give way to one `close`.
    let close_anyway = !keep_alive;
    let mut keep_alive = keep_alive;
    let mut has_date = false;
    for (name, value) in headers {
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING {
            continue;
        }
        if name == CONNECTION {
            if close_anyway {
                continue;
            }
            keep_alive &= !value
                .as_bytes()
                .split(|b| *b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"));
        }
        has_date |= name == DATE;
        put_header(out, name.as_str().as_bytes(), value.as_bytes());
    }
    match framing {
        Framing::Length(n) => {
            out.put_slice(b"content-length: ");
            put_decimal(out, n);
            out.put_slice(b"\r\n");
        }
        Framing::Chunked => out.put_slice(b"transfer-encoding: chunked\r\n"),
        Framing::None => {}
    }
    if close_anyway {
        out.put_slice(b"connection: close\r\n");
    }
    if !has_date {
        out.put_slice(b"date: ");
        put_date(out);
        out.put_slice(b"\r\n");
    }
    out.put_slice(b"\r\n");
    keep_alive
}

/// Frames `out[start..]` as one chunk: its size line goes in front, its end behind. Nothing
/// is added when it is empty (an empty chunk would end the body). The fallback for an event
/// that did not say its length before it was written (`payload::Sink::open`; every event the
/// mock sends says it): the event is moved behind its line.
pub fn close_chunk(out: &mut BytesMut, start: usize) {
    let len = out.len() - start;
    if len == 0 {
        return;
    }
    put_chunk_size(out, len);
    let line = out.len() - start - len;
    out[start..].rotate_right(line);
    out.put_slice(b"\r\n");
}

/// Ends a chunk whose size line (`line` bytes at `start`) was written before its data. That the
/// event is as long as it said is checked in debug builds, which every test runs: a check here
/// in release cost a stream 165 instructions (0.9%).
pub fn end_chunk(out: &mut BytesMut, start: usize, line: usize) {
    debug_assert_eq!(
        std::str::from_utf8(&out[start..start + line - 2])
            .ok()
            .and_then(|hex| usize::from_str_radix(hex, 16).ok()),
        Some(out.len() - start - line),
        "an event is as long as it said"
    );
    out.put_slice(b"\r\n");
}

/// Appends the zero-length chunk that ends a chunked body.
pub fn last_chunk(out: &mut BytesMut) {
    out.put_slice(b"0\r\n\r\n");
}

/// The `date` value of the current second, formatted once per second per thread.
struct DateCache {
    second: u64,
    text: String,
}

thread_local! {
    static DATE_CACHE: RefCell<DateCache> = const {
        RefCell::new(DateCache { second: u64::MAX, text: String::new() })
    };
}

fn put_date(out: &mut BytesMut) {
    let now = SystemTime::now();
    let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.second != second {
            cache.second = second;
            cache.text = httpdate::fmt_http_date(now);
        }
        out.put_slice(cache.text.as_bytes());
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderValue, CONTENT_TYPE};

    fn text(out: &BytesMut) -> &str {
        std::str::from_utf8(out).unwrap()
    }

    #[test]
    fn a_whole_answer_has_its_length_and_a_date() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut out = BytesMut::new();
        let keep = head(
            &mut out,
            StatusCode::OK,
            None,
            |out| out.put_slice(b"x-gatebench-upstream: a\r\n"),
            &headers,
            Framing::Length(434),
            true,
        );
        assert!(keep);
        let text = text(&out);
        assert!(text.starts_with(
            "HTTP/1.1 200 OK\r\nx-gatebench-upstream: a\r\ncontent-type: application/json\r\ncontent-length: 434\r\ndate: "
        ));
        assert!(text.ends_with(" GMT\r\n\r\n"), "{text}");
        assert!(!text.contains("connection"));
    }

    #[test]
    fn a_stream_is_chunked_and_a_last_answer_says_close() {
        let mut out = BytesMut::new();
        let keep = head(
            &mut out,
            StatusCode::TOO_MANY_REQUESTS,
            None,
            |_| {},
            &HeaderMap::new(),
            Framing::Chunked,
            false,
        );
        assert!(!keep);
        let text = text(&out);
        assert!(text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(text.contains("transfer-encoding: chunked\r\n"));
        assert!(text.contains("connection: close\r\n"));
    }

    #[test]
    fn an_answer_that_says_close_closes() {
        let mut headers = HeaderMap::new();
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
        let mut out = BytesMut::new();
        assert!(!head(
            &mut out,
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            |_| {},
            &headers,
            Framing::Length(0),
            true
        ));
        assert_eq!(text(&out).matches("connection: close").count(), 1);
    }

    #[test]
    fn a_chunk_is_framed_around_what_was_written() {
        let mut out = BytesMut::from(&b"head\r\n\r\n"[..]);
        let start = out.len();
        out.put_slice(&[b'x'; 0x1A2]);
        close_chunk(&mut out, start);
        let text = text(&out);
        assert!(text.starts_with("head\r\n\r\n1A2\r\nxxx"), "{text}");
        assert!(text.ends_with("xxx\r\n"));
        assert_eq!(out.len(), start + 5 + 0x1A2 + 2);
        // An empty chunk is left out.
        let before = out.len();
        close_chunk(&mut out, before);
        assert_eq!(out.len(), before);
        last_chunk(&mut out);
        assert!(self::text(&out).ends_with("xxx\r\n0\r\n\r\n"));
    }
}
