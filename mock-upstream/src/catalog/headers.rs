//! The fixed headers of an answer, kept twice: as a header map for hyper, and as the bytes the
//! own HTTP/1.1 server writes (`name: value\r\n` each), so an answer costs neither a map
//! clone nor a walk over a dozen headers there. An answer names its set with [`FixedHeaders`].

use bytes::{BufMut, Bytes, BytesMut};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};

use crate::payload::Piece;

/// `openai-processing-ms`: the latency the mock applied, as OpenAI reports its own.
pub const PROCESSING_MS: HeaderName = HeaderName::from_static("openai-processing-ms");

/// Which fixed header set an answer carries. A route that sets a header of the same name
/// expands the set into the answer's map first (`inbound::expand_fixed_headers`): the own
/// server writes the set and the map side by side, and a name in both would go out twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedHeaders {
    /// OpenAI's headers of a JSON answer, `openai-processing-ms` set to this.
    OpenAiJson { processing_ms: u64 },
    /// OpenAI's headers of a stream (`openai-processing-ms: 0`).
    OpenAiSse,
    /// Anthropic's headers of a JSON answer.
    AnthropicJson,
    /// Anthropic's headers of a stream.
    AnthropicSse,
}

/// One fixed header set, as a map and pre-encoded.
#[derive(Debug)]
pub struct HeaderSet {
    map: HeaderMap,
    /// Every header of `map` but `openai-processing-ms`, encoded.
    block: Bytes,
}

impl HeaderSet {
    pub fn new(map: HeaderMap) -> HeaderSet {
        let mut block = BytesMut::new();
        for (name, value) in &map {
            if name != PROCESSING_MS {
                put_header(&mut block, name.as_str().as_bytes(), value.as_bytes());
            }
        }
        HeaderSet {
            map,
            block: block.freeze(),
        }
    }

    /// The set as a map, with `openai-processing-ms` set to `processing_ms` when given.
    pub fn map(&self, processing_ms: Option<HeaderValue>) -> HeaderMap {
        let mut map = self.map.clone();
        if let Some(ms) = processing_ms {
            map.insert(PROCESSING_MS, ms);
        }
        map
    }

    /// Appends the set's encoded lines, with `openai-processing-ms` when given.
    pub fn put(&self, out: &mut BytesMut, processing_ms: Option<u64>) {
        out.put_slice(&self.block);
        if let Some(ms) = processing_ms {
            out.put_slice(b"openai-processing-ms: ");
            put_decimal(out, ms);
            out.put_slice(b"\r\n");
        }
    }
}

/// Appends `name: value\r\n`.
pub fn put_header(out: &mut BytesMut, name: &[u8], value: &[u8]) {
    out.put_slice(name);
    out.put_slice(b": ");
    out.put_slice(value);
    out.put_slice(b"\r\n");
}

/// Appends `n` in decimal.
pub fn put_decimal(out: &mut BytesMut, n: u64) {
    out.put_slice(Piece::number(n).bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::CONTENT_TYPE;

    #[test]
    fn the_map_and_the_bytes_hold_the_same_headers() {
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(PROCESSING_MS, HeaderValue::from_static("0"));
        map.insert("x-request-id", HeaderValue::from_static("req_1"));
        let set = HeaderSet::new(map);
        let mut out = BytesMut::new();
        set.put(&mut out, Some(1234));
        assert_eq!(
            &out[..],
            b"content-type: application/json\r\nx-request-id: req_1\r\n\
              openai-processing-ms: 1234\r\n"
        );
        let map = set.map(Some(HeaderValue::from(1234)));
        assert_eq!(map[PROCESSING_MS], "1234");
        assert_eq!(map.len(), 3);
        let mut out = BytesMut::new();
        set.put(&mut out, None);
        assert!(!String::from_utf8_lossy(&out).contains("processing"));
    }
}
