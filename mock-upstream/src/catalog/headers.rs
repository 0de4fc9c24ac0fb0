//! The fixed headers of an answer, kept twice: as a header map for hyper, and as the bytes the
//! own HTTP/1.1 server writes (`name: value\r\n` each), so an answer costs neither a map
//! clone nor a walk over a dozen headers there. An answer names its set with [`FixedHeaders`].

use std::cell::RefCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{BufMut, Bytes, BytesMut};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};

use crate::catalog::payload::put_decimal;

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
    /// Azure OpenAI's headers of a JSON answer.
    AzureJson,
    /// Azure OpenAI's headers of a stream.
    AzureSse,
    /// Google Gemini's headers of a JSON answer.
    GeminiJson,
    /// Google Gemini's headers of a stream.
    GeminiSse,
    /// AWS Bedrock's headers of a JSON answer.
    BedrockJson,
    /// AWS Bedrock's headers of an event stream.
    BedrockStream,
}

/// Anthropic's `anthropic-ratelimit-*-reset` headers: when the limits would be whole again.
/// The fixed levels sit one request and ten tokens under their limits, which refill in
/// milliseconds, so the time is the next whole second, given per answer.
pub const ANTHROPIC_RESETS: [HeaderName; 2] = [
    HeaderName::from_static("anthropic-ratelimit-requests-reset"),
    HeaderName::from_static("anthropic-ratelimit-tokens-reset"),
];

/// One fixed header set, as a map and pre-encoded.
#[derive(Debug)]
pub struct HeaderSet {
    map: HeaderMap,
    /// Every header of `map` but `openai-processing-ms`, encoded.
    block: Bytes,
    /// Whether the set carries [`ANTHROPIC_RESETS`], written per answer.
    resets: bool,
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
            resets: false,
        }
    }

    /// This set with Anthropic's reset times (the next whole second) added to every answer.
    pub fn with_resets(mut self) -> HeaderSet {
        self.resets = true;
        self
    }

    /// The set as a map, with `openai-processing-ms` set to `processing_ms` when given.
    pub fn map(&self, processing_ms: Option<HeaderValue>) -> HeaderMap {
        let mut map = self.map.clone();
        if let Some(ms) = processing_ms {
            map.insert(PROCESSING_MS, ms);
        }
        if self.resets {
            let at = next_second();
            for name in ANTHROPIC_RESETS {
                map.insert(name, at.clone());
            }
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
        if self.resets {
            let at = next_second();
            for name in ANTHROPIC_RESETS {
                put_header(out, name.as_str().as_bytes(), at.as_bytes());
            }
        }
    }
}

thread_local! {
    /// The next whole second in RFC 3339, with the second it was made in: made once a second
    /// per worker thread.
    static NEXT_SECOND: RefCell<(u64, HeaderValue)> =
        const { RefCell::new((u64::MAX, HeaderValue::from_static(""))) };
}

/// The next whole second of the wall clock, as RFC 3339 (`2026-12-01T05:40:08Z`).
pub fn next_second() -> HeaderValue {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    NEXT_SECOND.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.0 != now {
            let at = UNIX_EPOCH + Duration::from_secs(now + 1);
            let text = humantime::format_rfc3339_seconds(at).to_string();
            // Invariant: an RFC 3339 time is plain ASCII.
            cache.1 = HeaderValue::try_from(text).expect("a time is a header value");
            cache.0 = now;
        }
        cache.1.clone()
    })
}

/// A provider's fixed headers as a map: `content-type` first, then `fixed` in their order (the
/// order the own HTTP/1.1 server writes them in).
pub fn header_map(content_type: &'static str, fixed: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(fixed.len() + 2);
    map.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    for (name, value) in fixed {
        map.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    map
}

/// Appends `name: value\r\n`.
pub fn put_header(out: &mut BytesMut, name: &[u8], value: &[u8]) {
    out.put_slice(name);
    out.put_slice(b": ");
    out.put_slice(value);
    out.put_slice(b"\r\n");
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

    #[test]
    fn anthropic_resets_are_the_next_second_in_both_forms() {
        let set = HeaderSet::new(HeaderMap::new()).with_resets();
        let before = SystemTime::now();
        let map = set.map(None);
        let reset = map[&ANTHROPIC_RESETS[0]].to_str().unwrap();
        assert_eq!(map[&ANTHROPIC_RESETS[1]], reset);
        let at = humantime::parse_rfc3339(reset).unwrap();
        assert!(at > before, "{reset} is not after now");
        assert!(at <= before + Duration::from_secs(2), "{reset} is too far");
        let mut out = BytesMut::new();
        set.put(&mut out, None);
        let text = String::from_utf8(out.to_vec()).unwrap();
        assert!(
            text.contains("anthropic-ratelimit-tokens-reset: 20"),
            "{text}"
        );
    }
}
