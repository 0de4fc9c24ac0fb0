//! One request and its response, timed and validated.

use crate::http1::{Failure, RequestTemplate};
use crate::pacer::RunClock;
use crate::plan::RequestSpec;
use crate::pool::Pool;
use crate::recorder::{ErrorKind, Exchange};
use crate::sse::{Event, SseReader};

/// Most bytes of a whole (not streamed) 200 body kept for validation; a larger one is
/// `invalid`, so a target sending without end cannot fill memory.
const MAX_BODY: usize = 16 << 20;

/// Most output events of one stream whose gaps are kept (8 bytes each); a longer stream is
/// `invalid`.
const MAX_OUTPUT_EVENTS: usize = 1 << 20;

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
    template: &RequestTemplate,
    spec: &RequestSpec,
    clock: &RunClock,
    slot: Slot,
) -> Result<Exchange, ErrorKind> {
    let Slot {
        index,
        due_ns,
        dispatched_ns,
    } = slot;
    let mut lease = pool.acquire().await?;
    let target_wait_ns = lease.target_wait_ns;
    let connection = lease.connection();
    let sent_ns = clock.now_ns();
    connection
        .send(|out| template.encode(index, out))
        .await
        .map_err(error_kind)?;
    let response = connection.read_head().await.map_err(error_kind)?;
    let status = response.status;

    let mut x = Exchange {
        due_ns,
        dispatched_ns,
        sent_ns,
        target_wait_ns,
        stream: spec.stream,
        mock_times: response.mock_times,
        ..Exchange::default()
    };
    let mut sse = SseReader::new();
    let mut body = Vec::new();
    let (mut done, mut invalid) = (false, false);
    let mut last_output_ns = 0;
    let streamed = spec.stream && status == 200;
    connection
        .read_body(response, |data, at| {
            let now = clock.ns_of(at);
            x.first_byte_ns.get_or_insert(now);
            if !streamed {
                // Only a 200's body is validated; an error's status says enough.
                if status == 200 {
                    if body.len() + data.len() <= MAX_BODY {
                        body.extend_from_slice(data);
                    } else {
                        invalid = true;
                    }
                }
                return;
            }
            sse.feed(data, |event| match event {
                Event::Output | Event::OutputFinal(_) => {
                    if x.first_output_ns.is_none() {
                        x.first_output_ns = Some(now);
                    } else if x.output_gaps_ns.len() < MAX_OUTPUT_EVENTS {
                        x.output_gaps_ns.push(now - last_output_ns);
                    } else {
                        invalid = true;
                    }
                    last_output_ns = now;
                    x.output_events += 1;
                    if let Event::OutputFinal(tokens) = event {
                        x.usage_tokens = tokens.or(x.usage_tokens);
                        done = true;
                    }
                }
                Event::Usage(tokens) => x.usage_tokens = Some(tokens),
                Event::Done => done = true,
                Event::Final(tokens) => {
                    x.usage_tokens = tokens.or(x.usage_tokens);
                    done = true;
                }
                Event::Invalid => invalid = true,
                Event::Other => {}
            });
        })
        .await
        // A stream whose connection closed early is truncated; one reset (RST) is a reset.
        .map_err(error_kind)?;
    x.done_ns = connection
        .last_read()
        .map_or_else(|| clock.now_ns(), |at| clock.ns_of(at))
        .max(sent_ns);
    // The response ended cleanly: the connection can carry the next request.
    lease.give_back();

    if status != 200 {
        return Err(ErrorKind::Status(status));
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
    } else if invalid || !is_completion(&body) {
        return Err(ErrorKind::Invalid);
    }
    Ok(x)
}

fn error_kind(failure: Failure) -> ErrorKind {
    match failure {
        Failure::Reset => ErrorKind::Reset,
        Failure::Truncated => ErrorKind::Truncated,
        Failure::Invalid => ErrorKind::Invalid,
    }
}

/// True for a JSON object with a `choices`, `content` or `output` array (chat, messages,
/// responses), or any JSON object for other routes' bodies.
pub(crate) fn is_completion(body: &[u8]) -> bool {
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
