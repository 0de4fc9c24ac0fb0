//! The server's side of a connection: its frames applied as they are read, each response read
//! into its request's [`Reading`] and timed by the read that brought it.

use super::{
    protocol, Conn, ConnError, Failed, Remote, CONNECTION_WINDOW, MAX_BLOCK, MAX_STREAM_ID,
    STREAM_WINDOW,
};
use crate::wire::exchange::Reading;
use crate::wire::http2::frame::{self, code, flag, kind, setting, Header};
use crate::wire::http2::hpack::{self, HpackError};
use crate::wire::outcome::{ErrorKind, MockTimes};

impl Conn {
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
        // Streams that ended may have left room in the connection's window.
        self.send_blocked();
        Ok(used)
    }

    fn on_frame(&mut self, h: &Header, payload: &[u8], at: u64) -> Result<(), ConnError> {
        if let Some((id, _)) = self.continuing {
            if h.kind != kind::CONTINUATION || h.stream != id {
                return Err(protocol(code::PROTOCOL_ERROR));
            }
        }
        // A stream the client never opened is idle (push is off, so the server opens none),
        // and a stream's frames other than PRIORITY may not name it (RFC 9113, section 5.1).
        let on_stream = matches!(
            h.kind,
            kind::DATA | kind::HEADERS | kind::RST_STREAM | kind::WINDOW_UPDATE
        );
        // DATA, HEADERS and WINDOW_UPDATE on a closed stream are checked where their stream is
        // looked up ([`Conn::after_close`]); a RST_STREAM is never answered with one (section
        // 5.4.2).
        if on_stream && h.stream != 0 && (h.stream % 2 == 0 || h.stream >= self.next_id) {
            return Err(protocol(code::PROTOCOL_ERROR));
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
                if let Some(stream) = self
                    .streams
                    .get_mut(&h.stream)
                    .filter(|s| s.remote == Remote::Open)
                {
                    stream.remote = Remote::Reset;
                }
                self.complete(h.stream, Err(Failed::Kind(ErrorKind::Reset)), true);
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
                    self.queue_answer()?;
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
                    .filter(|(&id, s)| id > last && s.outcome.is_none() && s.pending.is_some())
                    .map(|(&id, _)| id)
                    .collect();
                // Streams past the last the server will answer were not processed (unless a
                // head came for one): they may go on another connection.
                for id in unanswered {
                    self.complete(id, Err(Failed::Unprocessed), true);
                }
                for w in self.waiters.drain(..) {
                    w.waker.wake();
                }
                Ok(())
            }
            kind::WINDOW_UPDATE => self.on_window_update(h, payload),
            // Push is off: a promise breaks the protocol.
            kind::PUSH_PROMISE => Err(protocol(code::PROTOCOL_ERROR)),
            // Priorities are ignored, once well formed (RFC 9113, section 6.3; a connection
            // error may stand in for the stream error the RFC names, section 5.4.1), and so
            // are frame types this client does not know.
            kind::PRIORITY => {
                if h.stream == 0 {
                    return Err(protocol(code::PROTOCOL_ERROR));
                }
                if payload.len() != 5 {
                    return Err(protocol(code::FRAME_SIZE_ERROR));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A frame on stream `id`, whose server side stands at `remote` (RFC 9113, section 5.1):
    /// DATA or HEADERS (`data_or_headers`) after its END_STREAM end the connection with
    /// STREAM_CLOSED; DATA, HEADERS or WINDOW_UPDATE after its RST_STREAM are answered with a
    /// RST_STREAM of STREAM_CLOSED (a RST_STREAM never is), and still applied to the
    /// connection (its window, its header table). Frames on a stream the client reset while
    /// the server's side was open are ignored, as the server may have sent them before it
    /// knew, and so are frames on a stream whose request has taken its outcome: the
    /// connection keeps no record of it.
    fn after_close(
        &mut self,
        id: u32,
        remote: Remote,
        data_or_headers: bool,
    ) -> Result<(), ConnError> {
        match remote {
            Remote::Open => Ok(()),
            Remote::Ended if data_or_headers => Err(protocol(code::STREAM_CLOSED)),
            Remote::Ended => Ok(()),
            Remote::Reset => {
                self.queue_answer()?;
                frame::put_rst_stream(&mut self.out, id, code::STREAM_CLOSED);
                self.wake_driver();
                Ok(())
            }
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
        let Some(stream) = self.streams.get_mut(&h.stream) else {
            return Ok(());
        };
        if stream.remote != Remote::Open {
            let remote = stream.remote;
            return self.after_close(h.stream, remote, true);
        }
        if end_stream {
            stream.remote = Remote::Ended;
        }
        // A stream the request gave up on, or that ended, reads nothing more.
        if stream.outcome.is_some() {
            return Ok(());
        }
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
        if stream.content_length.is_some_and(|l| stream.received > l) && !end_stream {
            self.stream_error(h.stream, code::PROTOCOL_ERROR);
            return Ok(());
        }
        // A body that ended is held to its length in `finish`.
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
        // The server's side is closed: a body unlike its length fails the request, and only
        // a request still sending is reset.
        let outcome = match stream.reading.take() {
            _ if stream.content_length.is_some_and(|l| l != stream.received) => {
                Err(ErrorKind::Invalid)
            }
            Some(reading) => reading.finish(now),
            None => Err(ErrorKind::Invalid),
        };
        self.complete(id, outcome.map_err(Failed::Kind), false);
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
        let (trailers, remote) = match self.streams.get(&id) {
            Some(s) => (s.reading.is_some(), s.remote),
            None => (false, Remote::Open),
        };
        self.after_close(id, remote, true)?;
        let head = match hpack::decode_head(block, &self.names, trailers) {
            Ok(head) => head,
            Err(HpackError::Compression) => return Err(protocol(code::COMPRESSION_ERROR)),
            Err(HpackError::Malformed) => {
                self.stream_error(id, code::PROTOCOL_ERROR);
                return Ok(());
            }
        };
        let Some(stream) = self.streams.get_mut(&id) else {
            return Ok(());
        };
        if end_stream && stream.remote == Remote::Open {
            stream.remote = Remote::Ended;
        }
        if stream.outcome.is_some() {
            return Ok(());
        }
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
        // A 204 or 304 has no body, whatever length its head gives (RFC 9113, section 8.1.1).
        stream.content_length = head
            .content_length
            .filter(|_| !matches!(head.status, 204 | 304));
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
                        if stream.send_window > frame::MAX_WINDOW {
                            return Err(ConnError {
                                code: code::FLOW_CONTROL_ERROR,
                                kind: ErrorKind::Invalid,
                            });
                        }
                    }
                }
                setting::MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=(1 << 24) - 1).contains(&(value as usize)) {
                        return Err(protocol(code::PROTOCOL_ERROR));
                    }
                    self.peer.max_frame = value as usize;
                }
                // A server may only say push is off (RFC 9113, section 6.5.2).
                setting::ENABLE_PUSH if value != 0 => return Err(protocol(code::PROTOCOL_ERROR)),
                _ => {}
            }
        }
        self.queue_answer()?;
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
            let (remote, over) = (stream.remote, stream.send_window > frame::MAX_WINDOW);
            self.after_close(h.stream, remote, false)?;
            if increment == 0 {
                self.stream_error(h.stream, code::PROTOCOL_ERROR);
            } else if over {
                self.stream_error(h.stream, code::FLOW_CONTROL_ERROR);
            }
        }
        self.send_blocked();
        Ok(())
    }
}
