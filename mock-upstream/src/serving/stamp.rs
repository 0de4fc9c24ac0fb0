//! The headers every answer carries besides its route's own: `x-gatebench-upstream: NAME`
//! (`--name`, encoded once at start-up) and `x-gatebench-seq-seen`, the request's
//! `x-gatebench-seq` echoed (its value shared, not copied), so a load generator behind a
//! gateway sees which upstream answered which request.

use bytes::BytesMut;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};

use crate::admission::request::SEQ_NAME;
use crate::catalog::put_header;
use crate::state::State;

/// The answer's header naming the mock (`--name`).
pub const UPSTREAM_HEADER: &str = "x-gatebench-upstream";
/// The answer's header echoing the request's `x-gatebench-seq`.
pub const SEQ_SEEN_HEADER: &str = "x-gatebench-seq-seen";

/// What a request's answer is stamped with beside the mock's name.
#[derive(Debug, Default)]
pub struct Stamp {
    seq: Option<HeaderValue>,
}

impl Stamp {
    /// Takes the request's `x-gatebench-seq` (a shared clone, no copy).
    #[inline]
    pub fn of(headers: &HeaderMap) -> Stamp {
        Stamp {
            seq: headers.get(&SEQ_NAME).cloned(),
        }
    }

    /// Inserts the headers into an answer's map (hyper's path, the control listener).
    pub fn insert(self, state: &State, headers: &mut HeaderMap) {
        if let Some(name) = &state.upstream {
            headers.insert(HeaderName::from_static(UPSTREAM_HEADER), name.clone());
        }
        if let Some(seq) = self.seq {
            headers.insert(HeaderName::from_static(SEQ_SEEN_HEADER), seq);
        }
    }

    /// Writes the header lines into an answer's head (the own HTTP/1.1 server).
    #[inline]
    pub fn put(&self, state: &State, out: &mut BytesMut) {
        if let Some(name) = &state.upstream {
            put_header(out, UPSTREAM_HEADER.as_bytes(), name.as_bytes());
        }
        if let Some(seq) = &self.seq {
            put_header(out, SEQ_SEEN_HEADER.as_bytes(), seq.as_bytes());
        }
    }
}
