//! One HTTP/2 connection's state, apart from its I/O: the frames read from the server are
//! applied here ([`Conn::receive`]), and the frames to write are appended to [`Conn::out`],
//! which the connection's task writes ([`super::driver`]).
//!
//! Each stream's response is read here as its frames arrive, into the request's
//! [`Reading`], timed by the read that brought them; the request's task only waits for the
//! outcome. Received bytes are given back to the server's windows at once.

mod open;
mod receive;

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use crate::wire::exchange::Reading;
use crate::wire::http2::frame::{self, code, setting};
use crate::wire::http2::hpack::Names;
use crate::wire::outcome::{ErrorKind, Exchange};

/// The client's receive windows: 2 MiB a stream and 5 MiB for the connection, so a long
/// answer is never held for a WINDOW_UPDATE. A window is topped up once half of it is used.
pub(crate) const STREAM_WINDOW: u32 = 2 << 20;
pub(crate) const CONNECTION_WINDOW: u32 = 5 << 20;
/// Streams opened before the server's SETTINGS say how many it allows.
const INITIAL_MAX_STREAMS: usize = 100;
/// The longest header block read, in CONTINUATION frames: four times the header list the
/// client's SETTINGS allow.
const MAX_BLOCK: usize = 64 << 10;
/// The highest stream id a client may use.
const MAX_STREAM_ID: u32 = (1 << 31) - 1;
/// The most answers to the server's own frames (PING and SETTINGS acknowledgements, resets
/// of streams it had closed) queued while the socket has not taken the frames before them:
/// past this the server is flooding the connection, which ends with ENHANCE_YOUR_CALM.
/// nghttp2's default limit on queued acknowledgements is the same.
pub(crate) const MAX_QUEUED_ANSWERS: usize = 1000;

/// A connection error: the code sent in the GOAWAY, and what the streams on it fail with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnError {
    pub code: u32,
    pub kind: ErrorKind,
}

/// Why a request has no answer from this connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failed {
    /// It failed so.
    Kind(ErrorKind),
    /// The server will not have processed it (it was never sent, or a GOAWAY left it out), so
    /// it can go on another connection (RFC 9113, section 8.7).
    Unprocessed,
}

fn protocol(code: u32) -> ConnError {
    ConnError {
        code,
        kind: ErrorKind::Invalid,
    }
}

/// Stream ids hashed as themselves: they are distinct small odd numbers.
#[derive(Debug, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u32(&mut self, id: u32) {
        self.0 = (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// One request's stream.
struct Stream {
    /// The exchange until the response's head comes, then read into `reading`.
    pending: Option<Exchange>,
    keep: bool,
    reading: Option<Reading>,
    /// Where the run's clock starts, on `CLOCK_MONOTONIC` (ns).
    start_mono_ns: u64,
    content_length: Option<u64>,
    received: u64,
    /// The body not yet sent, and whether the request's end was sent.
    body: Bytes,
    sent: usize,
    ended_sending: bool,
    send_window: i64,
    recv_window: i64,
    recv_unacked: u32,
    /// The outcome, once the response ended or failed.
    outcome: Option<Result<Exchange, Failed>>,
    waker: Option<Waker>,
    /// How the server's side of the stream stands.
    remote: Remote,
}

/// The server's side of a stream: the frames it may still send on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Remote {
    Open,
    /// It sent END_STREAM: DATA or HEADERS after it break the connection.
    Ended,
    /// It reset the stream: DATA, HEADERS or WINDOW_UPDATE after it are answered with a
    /// RST_STREAM of STREAM_CLOSED.
    Reset,
}

/// A request waiting for the server's stream limit, in order.
struct Waiter {
    ticket: u64,
    waker: Waker,
}

/// What the server's SETTINGS allow.
struct PeerSettings {
    max_streams: usize,
    initial_window: i64,
    max_frame: usize,
}

/// One connection's state.
pub(crate) struct Conn {
    /// Frames to write, in order.
    pub(crate) out: Vec<u8>,
    /// Answers to the server's own frames in `out` (see [`MAX_QUEUED_ANSWERS`]).
    queued_answers: usize,
    names: Names,
    streams: HashMap<u32, Stream, BuildHasherDefault<IdHasher>>,
    next_id: u32,
    /// Streams open against the server's limit (their outcome not yet known).
    active: usize,
    peer: PeerSettings,
    send_window: i64,
    recv_window: i64,
    recv_unacked: u32,
    /// Streams with body left to send, waiting for a window.
    blocked: VecDeque<u32>,
    /// A header block continued in CONTINUATION frames: its stream, whether it ends the
    /// stream, and its fragments so far.
    continuing: Option<(u32, bool)>,
    block: Vec<u8>,
    /// The server's first SETTINGS came.
    settled: bool,
    /// The last stream id a GOAWAY said the server will answer.
    going_away: Option<u32>,
    /// Why the connection ended, once it did.
    ended: Option<ErrorKind>,
    waiters: VecDeque<Waiter>,
    next_ticket: u64,
    driver: Option<Waker>,
    opener: Option<Waker>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("streams", &self.streams.len())
            .field("next_id", &self.next_id)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// A connection whose preface (the magic, the client's SETTINGS and its connection
    /// window) waits to be written.
    pub(crate) fn new() -> Conn {
        let mut out = Vec::with_capacity(16 << 10);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (setting::HEADER_TABLE_SIZE, 0),
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, STREAM_WINDOW),
                (setting::MAX_HEADER_LIST_SIZE, 16 << 10),
            ],
        );
        frame::put_window_update(
            &mut out,
            0,
            CONNECTION_WINDOW - frame::DEFAULT_WINDOW as u32,
        );
        Conn {
            out,
            queued_answers: 0,
            names: Names::default(),
            streams: HashMap::default(),
            next_id: 1,
            active: 0,
            peer: PeerSettings {
                max_streams: INITIAL_MAX_STREAMS,
                initial_window: frame::DEFAULT_WINDOW,
                max_frame: frame::DEFAULT_MAX_FRAME,
            },
            send_window: frame::DEFAULT_WINDOW,
            recv_window: CONNECTION_WINDOW as i64,
            recv_unacked: 0,
            blocked: VecDeque::new(),
            continuing: None,
            block: Vec::new(),
            settled: false,
            going_away: None,
            ended: None,
            waiters: VecDeque::new(),
            next_ticket: 0,
            driver: None,
            opener: None,
        }
    }

    /// Whether new streams can open here: the connection runs, no GOAWAY came, and stream
    /// ids are left.
    pub(crate) fn accepts_streams(&self) -> bool {
        self.ended.is_none() && self.going_away.is_none() && self.next_id <= MAX_STREAM_ID
    }

    /// Streams open against the server's limit.
    #[cfg(test)]
    pub(crate) fn active_streams(&self) -> usize {
        self.active
    }

    /// Ready once the server's first SETTINGS came; an error if the connection ended first.
    pub(crate) fn poll_settled(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ErrorKind>> {
        if let Some(kind) = self.ended {
            return Poll::Ready(Err(kind));
        }
        if self.settled {
            return Poll::Ready(Ok(()));
        }
        self.opener = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The connection's task waits for `waker`'s wake when there is more to write.
    pub(crate) fn set_driver(&mut self, waker: &Waker) {
        if !self.driver.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.driver = Some(waker.clone());
        }
    }

    fn wake_driver(&mut self) {
        if let Some(waker) = self.driver.take() {
            waker.wake();
        }
    }

    /// Ends stream `id` with `outcome` and wakes its request. A request whose body was not
    /// all sent is reset (CANCEL) unless `reset` says the server already did.
    fn complete(&mut self, id: u32, outcome: Result<Exchange, Failed>, reset: bool) {
        let Some(stream) = self.streams.get_mut(&id) else {
            return;
        };
        if stream.outcome.is_some() {
            return;
        }
        let cancel = !stream.ended_sending && !reset && self.ended.is_none();
        stream.ended_sending = true;
        stream.body = Bytes::new();
        stream.outcome = Some(outcome);
        // A stream's reading is over: its buffers go back now, not when the request wakes.
        stream.reading = None;
        if let Some(waker) = stream.waker.take() {
            waker.wake();
        }
        self.active -= 1;
        if cancel {
            frame::put_rst_stream(&mut self.out, id, code::CANCEL);
            self.wake_driver();
        }
        self.wake_first_waiter();
    }

    /// Hands the frames to write to the connection's task, which has written the last ones:
    /// `into` (empty) takes their place.
    pub(crate) fn take_out(&mut self, into: &mut Vec<u8>) {
        std::mem::swap(into, &mut self.out);
        self.queued_answers = 0;
    }

    /// Counts one answer to the server's own frames, about to be queued; past
    /// [`MAX_QUEUED_ANSWERS`] the connection ends instead.
    fn queue_answer(&mut self) -> Result<(), ConnError> {
        self.queued_answers += 1;
        if self.queued_answers > MAX_QUEUED_ANSWERS {
            return Err(protocol(code::ENHANCE_YOUR_CALM));
        }
        Ok(())
    }

    /// A stream error: the stream is reset with `code` and its request fails `invalid`.
    fn stream_error(&mut self, id: u32, code: u32) {
        if self.streams.get(&id).is_some_and(|s| s.outcome.is_none()) {
            frame::put_rst_stream(&mut self.out, id, code);
            self.wake_driver();
            self.complete(id, Err(Failed::Kind(ErrorKind::Invalid)), true);
        }
    }

    /// Ends the connection: every stream without an outcome fails with `kind`, and every
    /// waiting request and opener is woken to see it.
    pub(crate) fn close(&mut self, kind: ErrorKind) {
        if self.ended.is_some() {
            return;
        }
        let open: Vec<u32> = self
            .streams
            .iter()
            .filter(|(_, s)| s.outcome.is_none())
            .map(|(&id, _)| id)
            .collect();
        for id in open {
            self.complete(id, Err(Failed::Kind(kind)), true);
        }
        self.ended = Some(kind);
        for w in self.waiters.drain(..) {
            w.waker.wake();
        }
        if let Some(waker) = self.opener.take() {
            waker.wake();
        }
    }

    /// Ends the connection for an error of the server's: a GOAWAY with its code is written
    /// first.
    pub(crate) fn fail(&mut self, err: ConnError) {
        if self.ended.is_none() {
            frame::put_goaway(&mut self.out, 0, err.code);
        }
        self.close(err.kind);
    }
}
