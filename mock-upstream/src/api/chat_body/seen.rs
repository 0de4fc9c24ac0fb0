//! A chat body equal to the thread's last one, read by one comparison: its reading kept, with
//! the model as a range of the body so it is borrowed from the new body's own bytes.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use gatebench_shared::memo::Memo;
use gatebench_shared::wire::openai::ChatRequest;

/// The largest body whose reading is kept: a comparison and a copy stay far below the pass
/// they spare.
const MOST_KEPT: usize = 16 << 10;

/// A body read as kept: the request without its model, and where the model lies in the body.
type Detached = (ChatRequest<'static>, Option<Range<usize>>);

/// A body's reading as kept: `None` for a body left to serde.
type Reading = Option<Detached>;

thread_local! {
    /// This thread's last body read in full, and its reading.
    pub(super) static LAST: RefCell<Memo<Reading>> = const { RefCell::new(Memo::new()) };
}

/// [`read`](super::read), by one comparison when `body` is this thread's last body read in full.
///
/// A benchmark's client sends one body again and again; reading the mock's usual one-message
/// body cost about 1,300 instructions, a comparison of its 100 bytes a few dozen. A body that
/// differs is read in full, plus a comparison and a copy, until bodies are seen to differ
/// every time (`gatebench_shared::memo`).
pub fn read_seen(body: &[u8]) -> Option<ChatRequest<'_>> {
    LAST.with_borrow_mut(|last| {
        if let Some((reading, _)) = last.seen(|kept, _| kept == body) {
            let (request, model) = reading.as_ref()?;
            let mut request = request.clone();
            if let Some(at) = model {
                // The same bytes as the kept body's, so the same UTF-8 there.
                request.model = Some(Cow::Borrowed(std::str::from_utf8(&body[at.clone()]).ok()?));
            }
            return Some(request);
        }
        let request = super::read(body);
        let reading = match &request {
            None => Some(None),
            Some(request) => detach(body, request).map(Some),
        };
        if let Some(reading) = reading {
            last.keep(body, &reading, MOST_KEPT);
        }
        request
    })
}

/// `request`, read from `body`, as kept: its model as a range of `body`; `None` (not kept) if
/// the model is not a slice of it.
fn detach(body: &[u8], request: &ChatRequest<'_>) -> Option<Detached> {
    let model = match &request.model {
        None => None,
        Some(Cow::Borrowed(model)) => {
            let start = (model.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
            let range = start..start + model.len();
            if range.end > body.len() {
                return None;
            }
            Some(range)
        }
        Some(Cow::Owned(_)) => return None,
    };
    let detached = ChatRequest {
        model: None,
        messages: request.messages,
        stream: request.stream,
        stream_options: request.stream_options.clone(),
        max_tokens: request.max_tokens,
        max_completion_tokens: request.max_completion_tokens,
        n: request.n,
    };
    Some((detached, model))
}
