//! Entry points for the fuzz targets in `fuzz/`: what loadgen parses of a target's answer,
//! fed arbitrary bytes. Not an API; nothing here is used by loadgen itself.

use crate::wire::http1::head::{self, Framing};
use crate::wire::sse::SseReader;

/// Parses `bytes` as a response, head then body, as a connection would: the head, the body
/// by its framing (cut where the first byte of `splits` says, to cross read boundaries), the
/// body as an event stream and as a completion.
pub fn response(bytes: &[u8]) {
    let Ok(Some((head, used))) = head::parse(bytes) else {
        return;
    };
    let body = &bytes[used..];
    let cut = body
        .first()
        .map_or(0, |&b| usize::from(b) % (body.len() + 1));
    let mut sse = SseReader::new();
    let mut whole = Vec::new();
    let mut take = |data: &[u8]| {
        sse.feed(data, |_, _| {});
        whole.extend_from_slice(data);
    };
    match head.framing {
        Framing::Empty => {}
        Framing::Length(n) => {
            let n = usize::try_from(n).unwrap_or(usize::MAX).min(body.len());
            take(&body[..n.min(cut)]);
            take(&body[n.min(cut)..n]);
        }
        Framing::UntilClose => {
            take(&body[..cut]);
            take(&body[cut..]);
        }
        Framing::Chunked(mut decoder) => {
            // Offered in two reads; what the first leaves unconsumed comes again with the rest.
            let Ok(used) = decoder.decode(&body[..cut], &mut take) else {
                return;
            };
            let _ = decoder.decode(&body[used..], &mut take);
        }
    }
    let _ = sse.has_partial_event();
    let _ = crate::wire::completion::is_completion(&whole);
}
