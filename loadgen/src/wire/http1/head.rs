//! A response's status line and headers, parsed by `httparse`, reduced to what the client needs:
//! the status, how the body is framed, and whether the connection can carry another request.

use crate::wire::outcome::MockTimes;
use gatebench_shared::clock::{RECEIVED_HEADER, STARTED_HEADER};
use gatebench_shared::memo::Memo;
use httparse::{ParserConfig, Status};
use std::cell::RefCell;
use std::mem::MaybeUninit;

use super::chunked::Decoder;

/// Headers beyond this many make the response invalid.
const MAX_HEADERS: usize = 64;

/// How a response's body ends (RFC 9112, section 6.3).
#[derive(Debug, Clone)]
pub enum Framing {
    /// No body (1xx, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked(Decoder),
    /// Everything until the server closes the connection.
    UntilClose,
}

/// The parts of a response head the client acts on.
#[derive(Debug, Clone)]
pub struct Head {
    pub status: u16,
    pub framing: Framing,
    /// False when the server said `Connection: close`, or spoke HTTP/1.0 without keep-alive.
    pub keep_alive: bool,
    /// The mock's `x-mock-received-ns` and `x-mock-started-ns`, when it sent them.
    pub mock_times: Option<MockTimes>,
}

/// A response head that is not HTTP/1.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadError;

/// The largest head whose reading is kept for the next response.
const MOST_KEPT: usize = 4 << 10;

thread_local! {
    /// This thread's last head read in full: its bytes and what they said.
    static LAST: RefCell<Memo<Head>> = const { RefCell::new(Memo::new()) };
}

/// [`parse`], by one comparison when `input` starts with this thread's last head read in full.
///
/// A server's heads often repeat: nginx's differ only in `date`, once a second. The parser
/// decides where a head ends and what it says from its bytes up to that end alone, so input
/// that starts with the same bytes is the same head. Reading nginx's 5 headers cost about 2,100
/// instructions (the mock's 14, 4,800); a head that repeats costs a comparison and a copy of
/// the parts the client keeps. One that differs is read in full, plus a comparison that stops
/// at the first differing byte and a copy of its bytes, until the heads are seen to differ
/// every time (`gatebench_shared::memo`). The mock's do: each echoes its request's sequence
/// number (`x-gatebench-seq-seen`).
pub fn parse_seen(input: &[u8]) -> Result<Option<(Head, usize)>, HeadError> {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((head, used)) = last.seen(|kept, _| input.starts_with(kept)) {
            return Ok(Some((head.clone(), used)));
        }
        let parsed = parse(input)?;
        if let Some((head, used)) = &parsed {
            last.keep(&input[..*used], head, MOST_KEPT);
        }
        Ok(parsed)
    })
}

/// Parses a head at the start of `input`: `Ok(None)` when more bytes are needed, else the head
/// and its length in bytes.
pub fn parse(input: &[u8]) -> Result<Option<(Head, usize)>, HeadError> {
    if input.is_empty() {
        return Ok(None);
    }
    // Left uninitialised: httparse writes each header it reads before it is seen; filling 64
    // empty ones first was 2 KiB of stores a parse, and a parse of no bytes (before the first
    // read of every response) paid them too.
    let mut headers = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        input,
        &mut headers,
    );
    let used = match parsed {
        Ok(Status::Complete(used)) => used,
        Ok(Status::Partial) => return Ok(None),
        Err(_) => return Err(HeadError),
    };
    let status = response.code.ok_or(HeadError)?;
    let http10 = response.version == Some(0);
    let mut fields = Fields {
        length: None,
        chunked: false,
        other_coding: false,
        keep_alive: !http10,
        received: None,
        started: None,
    };
    for header in response.headers.iter() {
        fields.read(header, http10)?;
    }
    let framing = fields.framing(status);
    if matches!(framing, Framing::UntilClose) {
        fields.keep_alive = false;
    }
    Ok(Some((
        Head {
            status,
            framing,
            keep_alive: fields.keep_alive,
            mock_times: fields
                .received
                .zip(fields.started)
                .map(|(received_ns, started_ns)| MockTimes {
                    received_ns,
                    started_ns,
                }),
        },
        used,
    )))
}

/// What a head's headers say, gathered as they are read.
struct Fields {
    /// `Content-Length`.
    length: Option<u64>,
    /// The last transfer coding is `chunked`.
    chunked: bool,
    /// The last transfer coding is another.
    other_coding: bool,
    keep_alive: bool,
    /// The mock's `x-mock-received-ns` and `x-mock-started-ns`.
    received: Option<u64>,
    started: Option<u64>,
}

impl Fields {
    /// Takes in one header; repeated lengths that disagree make the head invalid.
    #[inline]
    fn read(&mut self, header: &httparse::Header, http10: bool) -> Result<(), HeadError> {
        let name = header.name;
        if name.len() > 7 && name[..7].eq_ignore_ascii_case("x-mock-") {
            let value = || std::str::from_utf8(header.value).ok()?.trim().parse().ok();
            if name.eq_ignore_ascii_case(RECEIVED_HEADER) {
                self.received = value();
            } else if name.eq_ignore_ascii_case(STARTED_HEADER) {
                self.started = value();
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            let value = parse_length(header.value).ok_or(HeadError)?;
            // Repeated lengths must agree.
            if self.length.is_some_and(|l| l != value) {
                return Err(HeadError);
            }
            self.length = Some(value);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // The last coding decides; anything but a final `chunked` is read until close.
            let last = header.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            self.chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            self.other_coding = !self.chunked;
        } else if name.eq_ignore_ascii_case("connection") {
            self.connection(header.value, http10);
        }
        Ok(())
    }

    /// `Connection: close` ends the connection; `keep-alive` keeps an HTTP/1.0 one.
    #[inline]
    fn connection(&mut self, value: &[u8], http10: bool) {
        for token in value.split(|&b| b == b',') {
            let token = token.trim_ascii();
            if token.eq_ignore_ascii_case(b"close") {
                self.keep_alive = false;
            } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                self.keep_alive = true;
            }
        }
    }

    /// How the body of a response with `status` ends.
    #[inline]
    fn framing(&self, status: u16) -> Framing {
        if (100..200).contains(&status) || status == 204 || status == 304 {
            Framing::Empty
        } else if self.chunked {
            Framing::Chunked(Decoder::default())
        } else if self.other_coding {
            Framing::UntilClose
        } else if let Some(length) = self.length {
            Framing::Length(length)
        } else {
            Framing::UntilClose
        }
    }
}

fn parse_length(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Head {
        let (head, used) = parse(text.as_bytes()).unwrap().unwrap();
        assert_eq!(used, text.len());
        head
    }

    #[test]
    fn reads_status_length_and_keep_alive() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n");
        assert_eq!(h.status, 200);
        assert!(matches!(h.framing, Framing::Length(12)));
        assert!(h.keep_alive);
    }

    #[test]
    fn chunked_wins_over_a_length() {
        let h = head(
            "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: gzip, chunked\r\n\r\n",
        );
        assert!(matches!(h.framing, Framing::Chunked(_)));
    }

    #[test]
    fn connection_close_and_http10_end_the_connection() {
        assert!(
            !head("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n").keep_alive
        );
        assert!(!head("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n").keep_alive);
        assert!(
            head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n")
                .keep_alive
        );
        let h = head("HTTP/1.1 200 OK\r\n\r\n");
        assert!(matches!(h.framing, Framing::UntilClose));
        assert!(!h.keep_alive);
    }

    #[test]
    fn bodiless_statuses_have_no_body() {
        assert!(matches!(
            head("HTTP/1.1 204 No Content\r\ncontent-length: 9\r\n\r\n").framing,
            Framing::Empty
        ));
        assert!(matches!(
            head("HTTP/1.1 100 Continue\r\n\r\n").framing,
            Framing::Empty
        ));
    }

    /// What the client keeps of a parse, comparable.
    fn kept(parsed: Result<Option<(Head, usize)>, HeadError>) -> String {
        format!("{parsed:?}")
    }

    #[test]
    fn a_head_seen_before_reads_as_it_did() {
        let mock = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-request-id: r\r\n\
                    content-length: 4\r\ndate: Sun, 06 Dec 2026 06:43:00 GMT\r\n\r\n";
        let next_second = mock.replace(":00 GMT", ":01 GMT");
        let timed = "HTTP/1.1 200 OK\r\nx-mock-received-ns: 7\r\nx-mock-started-ns: 9\r\n\
                     transfer-encoding: chunked\r\n\r\n";
        let retimed = timed.replace("started-ns: 9", "started-ns: 8");
        let inputs = [
            format!("{mock}body"),
            format!("{mock}body"),
            mock.to_string(),
            mock[..mock.len() - 1].to_string(),
            format!("{next_second}bodyHTTP/1.1 200 OK\r\n"),
            mock.to_string(),
            timed.to_string(),
            format!("{timed}5\r\nhello\r\n"),
            retimed.to_string(),
            "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n".into(),
            retimed.to_string(),
            "hello\r\n\r\n".into(),
            "".into(),
            format!("{}\r\nx: y\r\n\r\n", &mock[..mock.len() - 4]),
            mock.to_string(),
        ];
        for input in inputs {
            let input = input.as_bytes();
            assert_eq!(
                kept(parse_seen(input)),
                kept(parse(input)),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn partial_heads_wait_and_bad_ones_fail() {
        assert!(parse(b"HTTP/1.1 200 OK\r\ncontent-le").unwrap().is_none());
        assert_eq!(parse(b"hello\r\n\r\n").err(), Some(HeadError));
        assert_eq!(
            parse(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n").err(),
            Some(HeadError)
        );
        assert_eq!(
            parse(b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n").err(),
            Some(HeadError)
        );
    }
}
