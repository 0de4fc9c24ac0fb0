//! Reading what a request carries: its body (under a size limit) and its schedule index.

use std::future::Future;
use std::task::Poll;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, CONTENT_LENGTH};

use gatebench_shared::wire::SEQ_HEADER;

/// `x-gatebench-seq` as a name: a map looked up by it hashes it, where a lookup by `&str`
/// first parses and checks the name (about 250 instructions a lookup, twice a request).
pub static SEQ_NAME: HeaderName = HeaderName::from_static(SEQ_HEADER);

/// True for a request header the mock acts on: the sequence number, the API keys, Anthropic's
/// version, and every `x-mock-*` override (ASCII case ignored). The own HTTP/1.1 server builds a
/// request's header map from these alone: the others (`host`, `user-agent`, `content-length`,
/// …) would each cost a map entry and change no answer. A route that starts reading another
/// header must add it here; the test below lists the names, and `tests/tests/e2e/mock/http1.rs`
/// checks both servers answer alike.
pub fn acted_on(name: &[u8]) -> bool {
    const NAMES: [&str; 6] = [
        SEQ_HEADER,
        "authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        gatebench_shared::wire::anthropic::VERSION_HEADER,
    ];
    let prefix = b"x-mock-";
    (name.len() > prefix.len() && name[..prefix.len()].eq_ignore_ascii_case(prefix))
        || NAMES
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}

/// Why a body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// Larger than the configured limit.
    TooLarge,
    /// The connection failed or the client sent a malformed body.
    Read,
    /// Not all there within the body timeout (slow, or shorter than its content-length).
    TimedOut,
}

/// A request's body as a route receives it: still arriving through hyper, or already read
/// whole (or failed) by the mock's own HTTP/1.1 server.
#[derive(Debug)]
pub enum RequestBody {
    /// hyper's body, read by the route.
    Incoming(Incoming),
    /// The whole body, read before the route was called.
    Whole(Bytes),
    /// A body that could not be read before the route was called.
    Failed(BodyError),
}

/// [`read_body`] within `timeout`. A body that came with its headers is read without
/// arming a timer; only one still on its way is timed.
pub async fn read_body_within(
    headers: &HeaderMap,
    body: RequestBody,
    limit: u64,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    let body = match body {
        RequestBody::Incoming(body) => body,
        RequestBody::Whole(bytes) if bytes.len() as u64 > limit => return Err(BodyError::TooLarge),
        RequestBody::Whole(bytes) => return Ok(bytes),
        RequestBody::Failed(err) => return Err(err),
    };
    let mut read = std::pin::pin!(read_body(headers, body, limit));
    let first = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(result) => result,
        Poll::Pending => tokio::time::timeout(timeout, read)
            .await
            .unwrap_or(Err(BodyError::TimedOut)),
    }
}

/// Reads a whole body of at most `limit` bytes. A body that arrives in one piece is kept as it
/// is (no copy); one in several pieces is joined.
pub async fn read_body(
    headers: &HeaderMap,
    mut body: Incoming,
    limit: u64,
) -> Result<Bytes, BodyError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge);
    }
    let mut first: Option<Bytes> = None;
    let mut joined: Option<BytesMut> = None;
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Read)?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        total += data.len() as u64;
        if total > limit {
            return Err(BodyError::TooLarge);
        }
        match (&mut joined, first.take()) {
            (Some(buf), _) => buf.extend_from_slice(&data),
            (None, None) => first = Some(data),
            (None, Some(head)) => {
                let mut buf = BytesMut::with_capacity(declared.unwrap_or(total) as usize);
                buf.extend_from_slice(&head);
                buf.extend_from_slice(&data);
                joined = Some(buf);
            }
        }
    }
    Ok(match joined {
        Some(buf) => buf.freeze(),
        None => first.unwrap_or_default(),
    })
}

/// The request's `x-gatebench-seq`, if it has one.
pub fn seq(headers: &HeaderMap) -> Result<Option<u64>, InvalidSeq> {
    let Some(value) = headers.get(&SEQ_NAME) else {
        return Ok(None);
    };
    parse_u64(value.as_bytes()).map(Some).ok_or(InvalidSeq)
}

/// `x-gatebench-seq` was not a whole number.
#[derive(Debug)]
pub struct InvalidSeq;

fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        d.is_ascii_digit()
            .then(|| acc.checked_mul(10)?.checked_add(u64::from(d - b'0')))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headers_acted_on_are_named() {
        for name in [
            "x-gatebench-seq",
            "Authorization",
            "x-api-key",
            "anthropic-version",
            "x-mock-ttft",
            "X-Mock-Timestamps",
        ] {
            assert!(acted_on(name.as_bytes()), "{name}");
        }
        for name in [
            "host",
            "content-length",
            "user-agent",
            "x-mock-",
            "x-mockery",
        ] {
            assert!(!acted_on(name.as_bytes()), "{name}");
        }
    }
    use hyper::header::HeaderValue;

    #[test]
    fn seq_is_a_whole_number_or_absent() {
        let mut headers = HeaderMap::new();
        assert!(matches!(seq(&headers), Ok(None)));
        headers.insert(SEQ_HEADER, HeaderValue::from_static("12345"));
        assert!(matches!(seq(&headers), Ok(Some(12345))));
        for bad in ["", "-1", "1e3", "99999999999999999999999"] {
            headers.insert(SEQ_HEADER, HeaderValue::from_static(bad));
            assert!(seq(&headers).is_err(), "{bad}");
        }
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
    }
}
