//! One HTTP/2 connection's state, apart from its I/O: the frames read from the server are
//! applied here ([`Conn::receive`]), and the frames to write are appended to [`Conn::out`],
//! which the connection's task writes ([`super::driver`]).
//!
//! Each stream's response is read here as its frames arrive, into the request's
//! [`Reading`], timed by the read that brought them; the request's task only waits for the
//! outcome. Received bytes are given back to the server's windows at once.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use crate::wire::exchange::Reading;
use crate::wire::http2::frame::{self, code, flag, kind, setting, Header};
use crate::wire::http2::hpack::{self, HpackError, Names};
use crate::wire::outcome::{ErrorKind, Exchange, MockTimes};

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

/// A connection error: the code sent in the GOAWAY, and what the streams on it fail with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnError {
    pub code: u32,
    pub kind: ErrorKind,
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
    outcome: Option<Result<Exchange, ErrorKind>>,
    waker: Option<Waker>,
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

    /// Opens a stream for `pending` once the server's limit has room and no earlier request
    /// waits: its head (`block`) and as much of `body` as the windows allow are appended to
    /// the frames to write. Returns the stream's id.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn poll_open(
        &mut self,
        cx: &mut Context<'_>,
        ticket: &mut Option<u64>,
        block: &[&[u8]],
        body: &Bytes,
        pending: &mut Option<Exchange>,
        keep: bool,
        start_mono_ns: u64,
    ) -> Poll<Result<u32, ErrorKind>> {
        if !self.accepts_streams() {
            // Never sent: the connection it waited for is gone or going.
            self.leave_queue(ticket);
            return Poll::Ready(Err(ErrorKind::Reset));
        }
        let first = match (*ticket, self.waiters.front()) {
            (_, None) => true,
            (Some(t), Some(w)) => w.ticket == t,
            (None, Some(_)) => false,
        };
        if !first || self.active >= self.peer.max_streams {
            match *ticket {
                Some(t) => {
                    if let Some(w) = self.waiters.iter_mut().find(|w| w.ticket == t) {
                        w.waker.clone_from(cx.waker());
                    }
                }
                None => {
                    let t = self.next_ticket;
                    self.next_ticket += 1;
                    *ticket = Some(t);
                    self.waiters.push_back(Waiter {
                        ticket: t,
                        waker: cx.waker().clone(),
                    });
                }
            }
            return Poll::Pending;
        }
        self.leave_queue(ticket);
        let id = self.next_id;
        self.next_id += 2;
        self.active += 1;
        frame::put_headers(
            &mut self.out,
            id,
            block,
            body.is_empty(),
            self.peer.max_frame,
        );
        self.streams.insert(
            id,
            Stream {
                pending: pending.take(),
                keep,
                reading: None,
                start_mono_ns,
                content_length: None,
                received: 0,
                body: body.clone(),
                sent: 0,
                ended_sending: body.is_empty(),
                send_window: self.peer.initial_window,
                recv_window: STREAM_WINDOW as i64,
                recv_unacked: 0,
                outcome: None,
                waker: None,
            },
        );
        if !body.is_empty() && !self.send_body(id) {
            self.blocked.push_back(id);
        }
        self.wake_driver();
        Poll::Ready(Ok(id))
    }

    /// Takes `ticket` out of the queue; the next in line may now be first.
    fn leave_queue(&mut self, ticket: &mut Option<u64>) {
        if let Some(t) = ticket.take() {
            let was_first = self.waiters.front().is_some_and(|w| w.ticket == t);
            self.waiters.retain(|w| w.ticket != t);
            if was_first {
                self.wake_first_waiter();
            }
        }
    }

    fn wake_first_waiter(&mut self) {
        if let Some(w) = self.waiters.front() {
            w.waker.wake_by_ref();
        }
    }

    /// A request that no longer waits: it leaves the queue, and its stream, if it opened and
    /// has not ended, is reset (CANCEL).
    pub(crate) fn forget(&mut self, ticket: &mut Option<u64>, id: Option<u32>) {
        self.leave_queue(ticket);
        let Some(id) = id else { return };
        if let Some(stream) = self.streams.remove(&id) {
            if stream.outcome.is_none() {
                self.active -= 1;
                if self.ended.is_none() {
                    frame::put_rst_stream(&mut self.out, id, code::CANCEL);
                    self.wake_driver();
                }
                self.wake_first_waiter();
            }
        }
    }

    /// The outcome of stream `id`, once it is known.
    pub(crate) fn poll_outcome(
        &mut self,
        cx: &mut Context<'_>,
        id: u32,
    ) -> Poll<Result<Exchange, ErrorKind>> {
        let Some(stream) = self.streams.get_mut(&id) else {
            return Poll::Ready(Err(ErrorKind::Reset));
        };
        if stream.outcome.is_some() {
            let stream = self.streams.remove(&id);
            return Poll::Ready(
                stream
                    .and_then(|s| s.outcome)
                    .unwrap_or(Err(ErrorKind::Reset)),
            );
        }
        if !stream
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            stream.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Sends as much of stream `id`'s body as the windows allow; whether all of it is sent.
    fn send_body(&mut self, id: u32) -> bool {
        let Some(stream) = self.streams.get_mut(&id) else {
            return true;
        };
        while stream.sent < stream.body.len() {
            let window = self.send_window.min(stream.send_window).max(0) as usize;
            let n = (stream.body.len() - stream.sent)
                .min(self.peer.max_frame)
                .min(window);
            if n == 0 {
                return false;
            }
            let end = stream.sent + n == stream.body.len();
            frame::put_data(
                &mut self.out,
                id,
                &stream.body[stream.sent..stream.sent + n],
                end,
            );
            stream.sent += n;
            stream.send_window -= n as i64;
            self.send_window -= n as i64;
            stream.ended_sending = end;
        }
        true
    }

    /// Sends what the windows now allow of the bodies that waited for them.
    fn send_blocked(&mut self) {
        while let Some(&id) = self.blocked.front() {
            if !self.send_body(id) {
                return;
            }
            self.blocked.pop_front();
        }
    }

    /// Ends stream `id` with `outcome` and wakes its request. A request whose body was not
    /// all sent is reset (CANCEL) unless `reset` says the server already did.
    fn complete(&mut self, id: u32, outcome: Result<Exchange, ErrorKind>, reset: bool) {
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

    /// A stream error: the stream is reset with `code` and its request fails `invalid`.
    fn stream_error(&mut self, id: u32, code: u32) {
        if self.streams.get(&id).is_some_and(|s| s.outcome.is_none()) {
            frame::put_rst_stream(&mut self.out, id, code);
            self.wake_driver();
            self.complete(id, Err(ErrorKind::Invalid), true);
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
            self.complete(id, Err(kind), true);
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

    /// Applies the whole frames at the start of `src`, read at `at` (`CLOCK_MONOTONIC` ns).
    /// Returns how many octets they took; a partial frame is left for the next read.
    pub(crate) fn receive(&mut self, src: &[u8], at: u64) -> Result<usize, ConnError> {
        let mut used = 0;
        while let Some(header) = frame::Header::parse(&src[used..]) {
            if header.len > frame::DEFAULT_MAX_FRAME {
                return Err(protocol(code::FRAME_SIZE_ERROR));
            }
            let end = used + frame::HEADER_LEN + header.len;
            if end > src.len() {
                break;
            }
            self.on_frame(&header, &src[used + frame::HEADER_LEN..end], at)?;
            used = end;
            if self.ended.is_some() {
                break;
            }
        }
        Ok(used)
    }

    fn on_frame(&mut self, h: &Header, payload: &[u8], at: u64) -> Result<(), ConnError> {
        if let Some((id, _)) = self.continuing {
            if h.kind != kind::CONTINUATION || h.stream != id {
                return Err(protocol(code::PROTOCOL_ERROR));
            }
        }
        match h.kind {
            kind::DATA => self.on_data(h, payload, at),
            kind::HEADERS => self.on_headers(h, payload, at),
            kind::CONTINUATION => {
                let Some((id, end_stream)) = self.continuing else {
                    return Err(protocol(code::PROTOCOL_ERROR));
                };
                self.block.extend_from_slice(payload);
                if self.block.len() > MAX_BLOCK {
                    return Err(protocol(code::PROTOCOL_ERROR));
                }
                if h.has(flag::END_HEADERS) {
                    self.continuing = None;
                    let block = std::mem::take(&mut self.block);
                    let applied = self.on_block(id, &block, end_stream, at);
                    self.block = block;
                    self.block.clear();
                    applied?;
                }
                Ok(())
            }
            kind::RST_STREAM => {
                if h.stream == 0 {
                    return Err(protocol(code::PROTOCOL_ERROR));
                }
                if payload.len() != 4 {
                    return Err(protocol(code::FRAME_SIZE_ERROR));
                }
                self.complete(h.stream, Err(ErrorKind::Reset), true);
                Ok(())
            }
            kind::SETTINGS => self.on_settings(h, payload),
            kind::PING => {
                if h.stream != 0 {
                    return Err(protocol(code::PROTOCOL_ERROR));
                }
                if payload.len() != 8 {
                    return Err(protocol(code::FRAME_SIZE_ERROR));
                }
                if !h.has(flag::ACK) {
                    frame::put_ping_ack(&mut self.out, payload);
                }
                Ok(())
            }
            kind::GOAWAY => {
                if h.stream != 0 {
                    return Err(protocol(code::PROTOCOL_ERROR));
                }
                if payload.len() < 8 {
                    return Err(protocol(code::FRAME_SIZE_ERROR));
                }
                let last = u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
                    & MAX_STREAM_ID;
                self.going_away = Some(self.going_away.map_or(last, |l| l.min(last)));
                let unanswered: Vec<u32> = self
                    .streams
                    .iter()
                    .filter(|(&id, s)| id > last && s.outcome.is_none())
                    .map(|(&id, _)| id)
                    .collect();
                for id in unanswered {
                    self.complete(id, Err(ErrorKind::Reset), true);
                }
                for w in self.waiters.drain(..) {
                    w.waker.wake();
                }
                Ok(())
            }
            kind::WINDOW_UPDATE => self.on_window_update(h, payload),
            // Push is off: a promise breaks the protocol.
            kind::PUSH_PROMISE => Err(protocol(code::PROTOCOL_ERROR)),
            // Priorities and frame types this client does not know are ignored.
            kind::PRIORITY => Ok(()),
            _ => Ok(()),
        }
    }

    fn on_data(&mut self, h: &Header, payload: &[u8], at: u64) -> Result<(), ConnError> {
        if h.stream == 0 {
            return Err(protocol(code::PROTOCOL_ERROR));
        }
        // The whole frame, padding too, counts against both windows, and is given back.
        let len = payload.len() as u32;
        self.recv_window -= len as i64;
        if self.recv_window < 0 {
            return Err(ConnError {
                code: code::FLOW_CONTROL_ERROR,
                kind: ErrorKind::Invalid,
            });
        }
        self.recv_unacked += len;
        if self.recv_unacked >= CONNECTION_WINDOW / 2 {
            frame::put_window_update(&mut self.out, 0, self.recv_unacked);
            self.recv_window += self.recv_unacked as i64;
            self.recv_unacked = 0;
        }
        let data = frame::unpadded(h, payload).ok_or(protocol(code::PROTOCOL_ERROR))?;
        let end_stream = h.has(flag::END_STREAM);
        // A stream the request gave up on, or that ended, reads nothing more.
        let Some(stream) = self
            .streams
            .get_mut(&h.stream)
            .filter(|s| s.outcome.is_none())
        else {
            return Ok(());
        };
        stream.recv_window -= len as i64;
        let Some(reading) = stream.reading.as_mut().filter(|_| stream.recv_window >= 0) else {
            // DATA before the head, or past the stream's window.
            let code = if stream.recv_window < 0 {
                code::FLOW_CONTROL_ERROR
            } else {
                code::PROTOCOL_ERROR
            };
            self.stream_error(h.stream, code);
            return Ok(());
        };
        let now = at.saturating_sub(stream.start_mono_ns);
        if !data.is_empty() {
            reading.feed(data, now);
        }
        stream.received += data.len() as u64;
        if stream.content_length.is_some_and(|l| stream.received > l) {
            self.stream_error(h.stream, code::PROTOCOL_ERROR);
            return Ok(());
        }
        if end_stream {
            self.finish(h.stream, now);
            return Ok(());
        }
        stream.recv_unacked += len;
        if stream.recv_unacked >= STREAM_WINDOW / 2 {
            frame::put_window_update(&mut self.out, h.stream, stream.recv_unacked);
            stream.recv_window += stream.recv_unacked as i64;
            stream.recv_unacked = 0;
        }
        Ok(())
    }

    /// The response of stream `id` ended at `now` (ns on the run's clock).
    fn finish(&mut self, id: u32, now: u64) {
        let Some(stream) = self.streams.get_mut(&id) else {
            return;
        };
        if stream.content_length.is_some_and(|l| l != stream.received) {
            self.stream_error(id, code::PROTOCOL_ERROR);
            return;
        }
        let outcome = match stream.reading.take() {
            Some(reading) => reading.finish(now),
            None => Err(ErrorKind::Invalid),
        };
        self.complete(id, outcome, false);
    }

    fn on_headers(&mut self, h: &Header, payload: &[u8], at: u64) -> Result<(), ConnError> {
        if h.stream == 0 {
            return Err(protocol(code::PROTOCOL_ERROR));
        }
        let mut fragment = frame::unpadded(h, payload).ok_or(protocol(code::PROTOCOL_ERROR))?;
        if h.has(flag::PRIORITY) {
            fragment = fragment.get(5..).ok_or(protocol(code::PROTOCOL_ERROR))?;
        }
        let end_stream = h.has(flag::END_STREAM);
        if !h.has(flag::END_HEADERS) {
            self.continuing = Some((h.stream, end_stream));
            self.block.clear();
            self.block.extend_from_slice(fragment);
            return Ok(());
        }
        self.on_block(h.stream, fragment, end_stream, at)
    }

    /// A whole header block for stream `id`: its response's head, an informational head,
    /// or its trailers.
    fn on_block(
        &mut self,
        id: u32,
        block: &[u8],
        end_stream: bool,
        at: u64,
    ) -> Result<(), ConnError> {
        let trailers = self.streams.get(&id).is_some_and(|s| s.reading.is_some());
        let head = match hpack::decode_head(block, &self.names, trailers) {
            Ok(head) => head,
            Err(HpackError::Compression) => return Err(protocol(code::COMPRESSION_ERROR)),
            Err(HpackError::Malformed) => {
                self.stream_error(id, code::PROTOCOL_ERROR);
                return Ok(());
            }
        };
        let Some(stream) = self.streams.get_mut(&id).filter(|s| s.outcome.is_none()) else {
            return Ok(());
        };
        let now = at.saturating_sub(stream.start_mono_ns);
        if trailers {
            if end_stream {
                self.finish(id, now);
            } else {
                self.stream_error(id, code::PROTOCOL_ERROR);
            }
            return Ok(());
        }
        if head.status < 200 {
            // An informational head (103 and the like) comes before the response's own; 101
            // has no place in HTTP/2.
            if head.status == 101 || end_stream {
                self.stream_error(id, code::PROTOCOL_ERROR);
            }
            return Ok(());
        }
        let Some(mut x) = stream.pending.take() else {
            return Ok(());
        };
        x.mock_times = head
            .received_ns
            .zip(head.started_ns)
            .map(|(received_ns, started_ns)| MockTimes {
                received_ns,
                started_ns,
            });
        stream.content_length = head.content_length;
        stream.reading = Some(Reading::new(x, head.status, stream.keep));
        if end_stream {
            self.finish(id, now);
        }
        Ok(())
    }

    fn on_settings(&mut self, h: &Header, payload: &[u8]) -> Result<(), ConnError> {
        if h.stream != 0 {
            return Err(protocol(code::PROTOCOL_ERROR));
        }
        if h.has(flag::ACK) {
            return if payload.is_empty() {
                Ok(())
            } else {
                Err(protocol(code::FRAME_SIZE_ERROR))
            };
        }
        if payload.len() % 6 != 0 {
            return Err(protocol(code::FRAME_SIZE_ERROR));
        }
        for pair in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let value = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            match id {
                setting::MAX_CONCURRENT_STREAMS => self.peer.max_streams = value as usize,
                setting::INITIAL_WINDOW_SIZE => {
                    if value as i64 > frame::MAX_WINDOW {
                        return Err(ConnError {
                            code: code::FLOW_CONTROL_ERROR,
                            kind: ErrorKind::Invalid,
                        });
                    }
                    let delta = value as i64 - self.peer.initial_window;
                    self.peer.initial_window = value as i64;
                    for stream in self.streams.values_mut() {
                        stream.send_window += delta;
                    }
                }
                setting::MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=(1 << 24) - 1).contains(&(value as usize)) {
                        return Err(protocol(code::PROTOCOL_ERROR));
                    }
                    self.peer.max_frame = value as usize;
                }
                setting::ENABLE_PUSH if value > 1 => return Err(protocol(code::PROTOCOL_ERROR)),
                _ => {}
            }
        }
        frame::put_settings_ack(&mut self.out);
        if !self.settled {
            self.settled = true;
            if let Some(waker) = self.opener.take() {
                waker.wake();
            }
        }
        self.send_blocked();
        for w in &self.waiters {
            w.waker.wake_by_ref();
        }
        Ok(())
    }

    fn on_window_update(&mut self, h: &Header, payload: &[u8]) -> Result<(), ConnError> {
        if payload.len() != 4 {
            return Err(protocol(code::FRAME_SIZE_ERROR));
        }
        let increment = (u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
            & MAX_STREAM_ID) as i64;
        if h.stream == 0 {
            if increment == 0 {
                return Err(protocol(code::PROTOCOL_ERROR));
            }
            self.send_window += increment;
            if self.send_window > frame::MAX_WINDOW {
                return Err(ConnError {
                    code: code::FLOW_CONTROL_ERROR,
                    kind: ErrorKind::Invalid,
                });
            }
        } else if let Some(stream) = self.streams.get_mut(&h.stream) {
            stream.send_window += increment;
            if increment == 0 {
                self.stream_error(h.stream, code::PROTOCOL_ERROR);
            } else if stream.send_window > frame::MAX_WINDOW {
                self.stream_error(h.stream, code::FLOW_CONTROL_ERROR);
            }
        }
        self.send_blocked();
        Ok(())
    }
}
