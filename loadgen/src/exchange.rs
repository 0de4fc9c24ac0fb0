//! One request and its response, timed and validated.

use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE, HOST};
use hyper::{Request, StatusCode};

use gatebench_shared::wire::SEQ_HEADER;

use crate::pacer::RunClock;
use crate::plan::{RequestSpec, Target};
use crate::pool::Pool;
use crate::recorder::{ErrorKind, Exchange};
use crate::sse::{Event, SseReader};

/// A request's place in the schedule.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// Index in the whole schedule (sent as `x-gatebench-seq`).
    pub index: u64,
    /// Intended start, ns from the start of the run.
    pub due_ns: u64,
    /// When the generator got to it, ns from the start of the run.
    pub dispatched_ns: u64,
}

/// Sends the request of `slot` and reads its whole response. The caller bounds it with the
/// request timeout.
pub async fn exchange(
    pool: &Pool,
    target: &Target,
    spec: &RequestSpec,
    base_headers: &HeaderMap,
    clock: &RunClock,
    slot: Slot,
) -> Result<Exchange, ErrorKind> {
    let Slot {
        index,
        due_ns,
        dispatched_ns,
    } = slot;
    let mut lease = pool.acquire().await?;
    let mut request = Request::post(target.path.as_str())
        .body(Full::new(spec.body.clone()))
        .map_err(|_| ErrorKind::Invalid)?;
    *request.headers_mut() = base_headers.clone();
    request
        .headers_mut()
        .insert(SEQ_HEADER, HeaderValue::from(index));
    // Invariant: a lease always holds a sender until given back or dropped.
    let sender = lease.sender.as_mut().expect("lease holds a sender");
    sender.ready().await.map_err(|_| ErrorKind::Reset)?;
    let sent_ns = clock.now_ns();
    let response = sender.send_request(request).await.map_err(send_error)?;
    let status = response.status();
    let mut body = response.into_body();

    let mut x = Exchange {
        due_ns,
        dispatched_ns,
        sent_ns,
        stream: spec.stream,
        ..Exchange::default()
    };
    let mut sse = SseReader::new();
    // A non-streamed body: most arrive in one frame, kept as it is; more frames are joined.
    let mut body_bytes = BodyBytes::default();
    let (mut done, mut invalid) = (false, false);
    let mut last_output_ns = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| ErrorKind::Reset)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        // The bytes of this frame were read off the socket at the connection's last read.
        let now = lease
            .last_read
            .get()
            .map_or_else(|| clock.now_ns(), |at| clock.ns_of(at));
        x.first_byte_ns.get_or_insert(now);
        if !spec.stream || status != StatusCode::OK {
            body_bytes.push(data);
            continue;
        }
        sse.feed(&data, |event| match event {
            Event::Output => {
                if x.first_output_ns.is_none() {
                    x.first_output_ns = Some(now);
                } else {
                    x.output_gaps_ns.push(now - last_output_ns);
                }
                last_output_ns = now;
                x.output_events += 1;
            }
            Event::Usage(tokens) => x.usage_tokens = Some(tokens),
            Event::Done => done = true,
            Event::Invalid => invalid = true,
            Event::Other => {}
        });
    }
    x.done_ns = lease
        .last_read
        .get()
        .map_or_else(|| clock.now_ns(), |at| clock.ns_of(at))
        .max(sent_ns);
    // The response ended cleanly: the connection can carry the next request.
    lease.give_back();

    if status != StatusCode::OK {
        return Err(ErrorKind::Status(status.as_u16()));
    }
    if spec.stream {
        if invalid {
            return Err(ErrorKind::Invalid);
        }
        if !done || sse.has_partial_event() {
            return Err(ErrorKind::Truncated);
        }
        if x.usage_tokens.is_some_and(|t| t != x.output_events) {
            return Err(ErrorKind::Invalid);
        }
    } else if !is_completion(body_bytes.as_slice()) {
        return Err(ErrorKind::Invalid);
    }
    Ok(x)
}

/// The headers every request to `target` carries, built once: host, content type, the user's.
/// Room is left for `x-gatebench-seq`, added per request.
pub fn base_headers(target: &Target, spec: &RequestSpec) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(spec.headers.len() + 3);
    if let Ok(host) = HeaderValue::from_str(&target.authority) {
        headers.insert(HOST, host);
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (name, value) in &spec.headers {
        headers.insert(name.clone(), value.clone());
    }
    headers
}

/// The frames of a body, copied together only when there is more than one.
#[derive(Default)]
struct BodyBytes {
    first: Option<bytes::Bytes>,
    joined: Vec<u8>,
}

impl BodyBytes {
    fn push(&mut self, data: bytes::Bytes) {
        match self.first.take() {
            None if self.joined.is_empty() => self.first = Some(data),
            None => self.joined.extend_from_slice(&data),
            Some(first) => {
                self.joined.extend_from_slice(&first);
                self.joined.extend_from_slice(&data);
            }
        }
    }

    fn as_slice(&self) -> &[u8] {
        self.first.as_deref().unwrap_or(&self.joined)
    }
}

fn send_error(err: hyper::Error) -> ErrorKind {
    if err.is_timeout() {
        ErrorKind::Timeout
    } else if err.is_parse() || err.is_parse_status() {
        ErrorKind::Invalid
    } else {
        ErrorKind::Reset
    }
}

/// True for a JSON object with a `choices`, `content` or `output` array (chat, messages,
/// responses), or any JSON object for other routes' bodies.
fn is_completion(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Shape {
        #[serde(default)]
        choices: Option<Vec<serde::de::IgnoredAny>>,
        #[serde(default)]
        error: Option<serde::de::IgnoredAny>,
    }
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return false;
    }
    match serde_json::from_slice::<Shape>(body) {
        Ok(shape) => shape.error.is_none() && shape.choices.is_none_or(|c| !c.is_empty()),
        Err(_) => false,
    }
}
