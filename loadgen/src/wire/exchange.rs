//! One request and its response, timed and validated: the reading of bodies and streams and the
//! checks that HTTP/1.1 (`http1::exchange`) and HTTP/2 (`http2::exchange`) share.

use crate::wire::completion::is_completion_seen;
use crate::wire::outcome::{ErrorKind, Exchange, Kept};
use crate::wire::sse::{Event, SseReader};

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
    /// The answer's body is kept in the exchange (`Exchange::answer`): a session's turn resends
    /// it. Single requests keep nothing.
    pub keep_answer: bool,
    /// The closed loop that sends it (`--concurrency` without a rate), whose requests all go
    /// on one connection over HTTP/2: the worker's loop `i` on its connection `i mod n` (`n`
    /// its share of `--connections`), as each of h2load's clients keeps its own. The requests
    /// that one read's answers start then go out in one write. `None` takes the next
    /// connection in turn.
    pub lane: Option<usize>,
}

/// What is read of one response's body as it arrives, and its checks once it ended.
pub(crate) struct Reading {
    x: Exchange,
    status: u16,
    /// A stream's events are read (a 200 to a streaming request); else the body is kept.
    streamed: bool,
    /// A 200's whole body, streamed or not, is kept for the caller.
    keep: bool,
    sse: SseReader,
    /// A whole body, read for its checks (and kept when `keep`).
    body: Vec<u8>,
    /// A kept stream's answer, read as its events arrive, and the bytes it was read from.
    kept: Option<Box<Kept>>,
    kept_bytes: usize,
    done: bool,
    invalid: bool,
    last_output_ns: u64,
}

impl Reading {
    pub(crate) fn new(x: Exchange, status: u16, keep: bool) -> Reading {
        let streamed = x.stream && status == 200;
        Reading {
            streamed,
            keep: keep && status == 200,
            x,
            status,
            sse: SseReader::new(),
            body: body_buffers::take(),
            kept: (keep && streamed).then(Box::default),
            kept_bytes: 0,
            done: false,
            invalid: false,
            last_output_ns: 0,
        }
    }

    /// Takes in `data`, read at `now` (ns on the run's clock).
    pub(crate) fn feed(&mut self, data: &[u8], now: u64) {
        let x = &mut self.x;
        x.first_byte_ns.get_or_insert(now);
        if !self.streamed {
            // Only a 200's body is validated; an error's status says enough.
            if self.status == 200 {
                if self.body.len() + data.len() <= MAX_BODY {
                    self.body.extend_from_slice(data);
                } else {
                    self.invalid = true;
                }
            }
            return;
        }
        if self.kept.is_some() {
            self.kept_bytes += data.len();
            if self.kept_bytes > MAX_BODY {
                self.invalid = true;
                self.kept = None;
            }
        }
        let (done, invalid, last_output_ns) =
            (&mut self.done, &mut self.invalid, &mut self.last_output_ns);
        let mut kept_events = self.kept.as_deref_mut();
        self.sse.feed(data, |event, held| {
            match event {
                Event::Output | Event::OutputFinal(_) => {
                    if x.first_output_ns.is_none() {
                        x.first_output_ns = Some(now);
                    } else if x.output_gaps_ns.len() < MAX_OUTPUT_EVENTS {
                        x.output_gaps_ns.push(now - *last_output_ns);
                    } else {
                        *invalid = true;
                    }
                    *last_output_ns = now;
                    x.output_events += 1;
                    if let Event::OutputFinal(tokens) = event {
                        x.usage_tokens = tokens.or(x.usage_tokens);
                        *done = true;
                    }
                }
                Event::Usage(tokens) => x.usage_tokens = Some(tokens),
                Event::Done => *done = true,
                Event::Final(tokens) => {
                    x.usage_tokens = tokens.or(x.usage_tokens);
                    *done = true;
                }
                Event::Invalid => *invalid = true,
                Event::Other => {}
            }
            if let Some(kept) = kept_events.as_deref_mut() {
                kept.keep(held)
            }
        });
        // AWS's binary event stream is kept as it came, for the session's reader.
        if self.sse.is_binary() {
            if let Some(kept) = self.kept.as_deref_mut() {
                kept.answer.extend_from_slice(data);
            }
        }
    }

    /// The exchange, once its body ended at `done_ns`, or why it failed.
    pub(crate) fn finish(mut self, done_ns: u64) -> Result<Exchange, ErrorKind> {
        self.x.done_ns = done_ns.max(self.x.sent_ns);
        if self.status != 200 {
            return Err(ErrorKind::Status(self.status));
        }
        if self.x.stream {
            if self.invalid {
                return Err(ErrorKind::Invalid);
            }
            if !self.done || self.sse.has_partial_event() {
                return Err(ErrorKind::Truncated);
            }
            if self
                .x
                .usage_tokens
                .is_some_and(|t| t != self.x.output_events)
            {
                return Err(ErrorKind::Invalid);
            }
        } else if self.invalid || !is_completion_seen(&self.body) {
            return Err(ErrorKind::Invalid);
        }
        if self.keep {
            self.x.kept = self.kept.take().or_else(|| {
                Some(Box::new(Kept {
                    answer: std::mem::take(&mut self.body),
                    ..Kept::default()
                }))
            });
        }
        Ok(std::mem::take(&mut self.x))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        body_buffers::give_back(std::mem::take(&mut self.body));
    }
}

/// The buffers whole bodies are read into, kept per thread from one exchange to the next, so
/// reading a body allocates only while the pool grows to the worker's requests in flight.
mod body_buffers {
    use std::cell::RefCell;

    /// Most buffers kept, and the largest one kept (a rare large body is not held on to).
    const MOST: usize = 1024;
    const LARGEST: usize = 256 << 10;

    thread_local! {
        static FREE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn take() -> Vec<u8> {
        FREE.with(|f| f.borrow_mut().pop()).unwrap_or_default()
    }

    pub(super) fn give_back(mut buffer: Vec<u8>) {
        if buffer.capacity() == 0 || buffer.capacity() > LARGEST {
            return;
        }
        buffer.clear();
        FREE.with(|f| {
            let mut free = f.borrow_mut();
            if free.len() < MOST {
                free.push(buffer);
            }
        });
    }
}
