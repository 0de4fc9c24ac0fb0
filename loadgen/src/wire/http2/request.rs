//! HTTP/2 requests encoded once: each request's header block is the template's fields, then its
//! `x-gatebench-seq`; its body is the template's, shared, not copied.
//!
//! Every field is a literal never added to a table (RFC 7541, section 6.2.2), its value not
//! Huffman-coded: no table state to keep in step with the server, and nothing to encode per
//! request but the number.

use bytes::Bytes;
use gatebench_shared::wire::SEQ_HEADER;
use hyper::header::{
    HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, TE, TRANSFER_ENCODING,
};

use crate::model::target::Target;
use crate::wire::http2::hpack::{put_literal, put_string};
use crate::wire::target::RequestSpec;

/// The static table's entries a request names (RFC 7541, Appendix A).
const METHOD_POST: u8 = 0x80 | 3;
const SCHEME_HTTP: u8 = 0x80 | 6;
const SCHEME_HTTPS: u8 = 0x80 | 7;
const AUTHORITY: usize = 1;
const PATH: usize = 4;
const CONTENT_LENGTH_INDEX: usize = 28;
const CONTENT_TYPE_INDEX: usize = 31;

/// The parts of a run's HTTP/2 requests.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// Every field but the request's number.
    fields: Vec<u8>,
    /// The number's field up to its value: never indexed, its literal name.
    seq_field: Vec<u8>,
    body: Bytes,
}

/// One request's number as a string literal.
pub(crate) struct Seq {
    octets: [u8; 21],
    len: usize,
}

impl Seq {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.octets[..self.len]
    }
}

impl RequestTemplate {
    /// `POST` of `spec`'s body to `path` on the target: the authority (`:authority`) is the
    /// URL's, or the user's `Host` header; a JSON content type unless the user gave one; the
    /// user's headers but those HTTP/2 forbids (RFC 9113, section 8.2.2), and the body's
    /// length.
    pub fn post_to(target: &Target, path: &str, spec: &RequestSpec) -> RequestTemplate {
        let authority = spec
            .headers
            .iter()
            .find(|(n, _)| n == HOST)
            .and_then(|(_, v)| v.to_str().ok())
            .unwrap_or(&target.authority);
        let mut fields = vec![
            METHOD_POST,
            if target.tls {
                SCHEME_HTTPS
            } else {
                SCHEME_HTTP
            },
        ];
        put_literal(&mut fields, Some(AUTHORITY), b"", authority.as_bytes());
        put_literal(&mut fields, Some(PATH), b"", path.as_bytes());
        if !spec.headers.iter().any(|(n, _)| n == CONTENT_TYPE) {
            put_literal(
                &mut fields,
                Some(CONTENT_TYPE_INDEX),
                b"",
                b"application/json",
            );
        }
        // Headers the user's `Connection` names are that hop's only, as the header itself is.
        let listed: Vec<String> = spec
            .headers
            .iter()
            .filter(|(n, _)| n == CONNECTION)
            .filter_map(|(_, v)| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|n| n.trim().to_ascii_lowercase())
            .collect();
        for (name, value) in &spec.headers {
            if is_connection_specific(name, value)
                || listed.iter().any(|n| n == name.as_str())
                || name == HOST
                || name == CONTENT_LENGTH
            {
                continue;
            }
            let index = (name == CONTENT_TYPE).then_some(CONTENT_TYPE_INDEX);
            put_literal(
                &mut fields,
                index,
                name.as_str().as_bytes(),
                value.as_bytes(),
            );
        }
        let length = spec.body.len().to_string();
        put_literal(
            &mut fields,
            Some(CONTENT_LENGTH_INDEX),
            b"",
            length.as_bytes(),
        );
        let mut seq_field = vec![0x10];
        put_string(&mut seq_field, SEQ_HEADER.as_bytes());
        RequestTemplate {
            fields,
            seq_field,
            body: spec.body.clone(),
        }
    }

    /// The header block of request `seq`, in parts: its number is sent never indexed, as a
    /// value each request changes would only churn a table.
    pub(crate) fn block(&self, seq: u64) -> ([&[u8]; 2], Seq) {
        let mut number = itoa::Buffer::new();
        let digits = number.format(seq).as_bytes();
        let mut octets = [0u8; 21];
        octets[0] = digits.len() as u8;
        octets[1..=digits.len()].copy_from_slice(digits);
        (
            [&self.fields, &self.seq_field],
            Seq {
                octets,
                len: digits.len() + 1,
            },
        )
    }

    /// The body every request sends.
    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

/// A header HTTP/2 forbids (RFC 9113, section 8.2.2): `te` is allowed as `trailers` only.
fn is_connection_specific(name: &HeaderName, value: &HeaderValue) -> bool {
    name == CONNECTION
        || name == TRANSFER_ENCODING
        || (name == TE && value != "trailers")
        || matches!(name.as_str(), "keep-alive" | "proxy-connection" | "upgrade")
}
