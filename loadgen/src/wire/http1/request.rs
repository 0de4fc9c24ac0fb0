//! Requests encoded once: every request of a template is the same bytes but for its
//! `x-gatebench-seq` value, so the head is built at start-up and each request is three copies
//! and a number. The body is shared, not copied, between the templates of several workers.

use bytes::Bytes;
use gatebench_shared::wire::SEQ_HEADER;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, TRANSFER_ENCODING};

use crate::model::target::Target;
use crate::wire::target::RequestSpec;

/// The bytes of a run's requests, around the sequence number.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// Request line and headers, ending with `x-gatebench-seq: `.
    head: Vec<u8>,
    body: Bytes,
    /// Where the body holds [`MARK_WIDTH`] digits that carry the sequence number too, for
    /// gateways that pass the body on but not the header (`loadgen behaviour`).
    mark: Option<usize>,
}

/// Digits of the sequence number written into a marked body: fixed, so the length is too.
pub const MARK_WIDTH: usize = 20;
// u64::MAX has 20 digits: one more than its log10.
const _: () = assert!(MARK_WIDTH > u64::MAX.ilog10() as usize);

impl RequestTemplate {
    /// `POST` of `spec`'s body to `target`, with the Host, a JSON content type (unless the user
    /// gave one), the user's headers and the body's length.
    pub fn post(target: &Target, spec: &RequestSpec) -> RequestTemplate {
        RequestTemplate::post_to(target, &target.path, spec)
    }

    /// [`RequestTemplate::post`] to `path` on the target's host, in place of its own path.
    pub fn post_to(target: &Target, path: &str, spec: &RequestSpec) -> RequestTemplate {
        let user_has = |name| spec.headers.iter().any(|(n, _)| n == name);
        let mut head = Vec::with_capacity(256);
        head.extend_from_slice(b"POST ");
        head.extend_from_slice(path.as_bytes());
        head.extend_from_slice(b" HTTP/1.1\r\n");
        if !user_has(&HOST) {
            push_header(&mut head, b"host", target.authority.as_bytes());
        }
        if !user_has(&CONTENT_TYPE) {
            push_header(&mut head, b"content-type", b"application/json");
        }
        for (name, value) in &spec.headers {
            // The framing is ours: the body is sent whole with its length.
            if name == CONTENT_LENGTH || name == TRANSFER_ENCODING {
                continue;
            }
            push_header(&mut head, name.as_str().as_bytes(), value.as_bytes());
        }
        let length = spec.body.len().to_string();
        push_header(&mut head, b"content-length", length.as_bytes());
        head.extend_from_slice(SEQ_HEADER.as_bytes());
        head.extend_from_slice(b": ");
        RequestTemplate {
            head,
            body: spec.body.clone(),
            mark: None,
        }
    }

    /// The same requests with the sequence number written, [`MARK_WIDTH`] digits wide, into
    /// the body at byte `at` too (over digits the body holds there).
    pub fn marked_at(mut self, at: usize) -> RequestTemplate {
        assert!(at + MARK_WIDTH <= self.body.len(), "a mark inside the body");
        self.mark = Some(at);
        self
    }

    /// Writes request `seq` into `out`, replacing what it held.
    pub fn encode(&self, seq: u64, out: &mut Vec<u8>) {
        out.clear();
        out.reserve(self.head.len() + 24 + self.body.len());
        out.extend_from_slice(&self.head);
        // itoa, not `write!`: the formatting machinery spent about 230 instructions a request.
        let mut digits = itoa::Buffer::new();
        let seq = digits.format(seq).as_bytes();
        out.extend_from_slice(seq);
        out.extend_from_slice(b"\r\n\r\n");
        match self.mark {
            None => out.extend_from_slice(&self.body),
            Some(at) => {
                out.extend_from_slice(&self.body[..at]);
                // Zero-padded to the mark's width, which holds any u64 (checked below).
                out.resize(out.len() + MARK_WIDTH.saturating_sub(seq.len()), b'0');
                out.extend_from_slice(seq);
                out.extend_from_slice(&self.body[at + MARK_WIDTH..]);
            }
        }
    }
}

fn push_header(head: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    head.extend_from_slice(name);
    head.extend_from_slice(b": ");
    head.extend_from_slice(value);
    head.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderName, HeaderValue};

    fn target() -> Target {
        Target {
            url: "http://127.0.0.1:8080/v1/chat/completions".into(),
            authority: "127.0.0.1:8080".into(),
            path: "/v1/chat/completions".into(),
            resolved: "127.0.0.1:8080".parse().unwrap(),
            tls: false,
        }
    }

    fn spec(headers: &[(&'static str, &'static str)]) -> RequestSpec {
        RequestSpec {
            scenario: "chat".into(),
            stream: false,
            body: bytes::Bytes::from_static(b"{\"a\":1}"),
            max_tokens: None,
            headers: headers
                .iter()
                .map(|(n, v)| (HeaderName::from_static(n), HeaderValue::from_static(v)))
                .collect(),
        }
    }

    #[test]
    fn a_marked_body_carries_the_number_at_a_fixed_length() {
        let mut s = spec(&[]);
        s.body = bytes::Bytes::from_static(b"{\"user\":\"gb-00000000000000000000\"}");
        let template = RequestTemplate::post(&target(), &s).marked_at(12);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        template.encode(7, &mut a);
        template.encode(123_456, &mut b);
        assert_eq!(
            a.len() + 5,
            b.len(),
            "only the header's digits change the length"
        );
        assert!(a.ends_with(b"{\"user\":\"gb-00000000000000000007\"}"));
        assert!(b.ends_with(b"{\"user\":\"gb-00000000000000123456\"}"));
        template.encode(0, &mut a);
        assert!(a.ends_with(b"{\"user\":\"gb-00000000000000000000\"}"));
        template.encode(u64::MAX, &mut a);
        assert!(a.ends_with(b"{\"user\":\"gb-18446744073709551615\"}"));
        assert!(a
            .windows(37)
            .any(|w| w == b"x-gatebench-seq: 18446744073709551615"));
    }

    #[test]
    fn encodes_a_complete_request_that_httparse_reads_back() {
        let template = RequestTemplate::post(&target(), &spec(&[("authorization", "Bearer k")]));
        let mut out = Vec::new();
        template.encode(42, &mut out);
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut request = httparse::Request::new(&mut headers);
        let httparse::Status::Complete(head_len) = request.parse(&out).unwrap() else {
            panic!("incomplete head");
        };
        assert_eq!(request.method, Some("POST"));
        assert_eq!(request.path, Some("/v1/chat/completions"));
        let get = |name: &str| {
            request
                .headers
                .iter()
                .find(|h| h.name == name)
                .map(|h| std::str::from_utf8(h.value).unwrap().to_string())
        };
        assert_eq!(get("host").as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(get("content-type").as_deref(), Some("application/json"));
        assert_eq!(get("authorization").as_deref(), Some("Bearer k"));
        assert_eq!(get("content-length").as_deref(), Some("7"));
        assert_eq!(get(SEQ_HEADER).as_deref(), Some("42"));
        assert_eq!(&out[head_len..], b"{\"a\":1}");

        template.encode(7, &mut out);
        assert!(out.windows(21).any(|w| w == b"x-gatebench-seq: 7\r\n\r"));
    }

    #[test]
    fn the_users_content_type_and_host_win_and_framing_stays_ours() {
        let template = RequestTemplate::post(
            &target(),
            &spec(&[
                ("content-type", "text/plain"),
                ("host", "api.openai.com"),
                ("content-length", "999"),
            ]),
        );
        let mut out = Vec::new();
        template.encode(0, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("content-type").count(), 1);
        assert!(text.contains("content-type: text/plain\r\n"));
        assert!(text.contains("host: api.openai.com\r\n"));
        assert!(!text.contains("999"));
        assert!(text.contains("content-length: 7\r\n"));
    }
}
