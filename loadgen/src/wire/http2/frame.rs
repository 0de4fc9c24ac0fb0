//! HTTP/2 frames (RFC 9113, section 4 and 6): the 9-octet header every frame starts with, and
//! the frames the client writes.

/// The octets a client opens every connection with (section 3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub(crate) const HEADER_LEN: usize = 9;
/// The largest frame payload either side may send before SETTINGS say more (section 4.2).
pub(crate) const DEFAULT_MAX_FRAME: usize = 16_384;
/// The windows every stream and the connection start with (section 6.9.2).
pub(crate) const DEFAULT_WINDOW: i64 = 65_535;
/// The largest a window may grow (section 6.9.1).
pub(crate) const MAX_WINDOW: i64 = (1 << 31) - 1;

pub(crate) mod kind {
    pub const DATA: u8 = 0;
    pub const HEADERS: u8 = 1;
    pub const PRIORITY: u8 = 2;
    pub const RST_STREAM: u8 = 3;
    pub const SETTINGS: u8 = 4;
    pub const PUSH_PROMISE: u8 = 5;
    pub const PING: u8 = 6;
    pub const GOAWAY: u8 = 7;
    pub const WINDOW_UPDATE: u8 = 8;
    pub const CONTINUATION: u8 = 9;
}

pub(crate) mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// Error codes (section 7).
pub(crate) mod code {
    pub const PROTOCOL_ERROR: u32 = 1;
    pub const FLOW_CONTROL_ERROR: u32 = 3;
    pub const STREAM_CLOSED: u32 = 5;
    pub const FRAME_SIZE_ERROR: u32 = 6;
    pub const CANCEL: u32 = 8;
    pub const COMPRESSION_ERROR: u32 = 9;
    pub const ENHANCE_YOUR_CALM: u32 = 11;
}

/// SETTINGS parameters (section 6.5.2).
pub(crate) mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 1;
    pub const ENABLE_PUSH: u16 = 2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 3;
    pub const INITIAL_WINDOW_SIZE: u16 = 4;
    pub const MAX_FRAME_SIZE: u16 = 5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 6;
}

/// A frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Header {
    /// The header at the start of `src`, if all 9 octets are there.
    pub(crate) fn parse(src: &[u8]) -> Option<Header> {
        let h: &[u8; HEADER_LEN] = src.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Header {
            len: u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize,
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
        })
    }

    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Appends a frame header.
pub(crate) fn put_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = (len as u32).to_be_bytes();
    out.extend_from_slice(&[len[1], len[2], len[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a SETTINGS frame of `(parameter, value)` pairs.
pub(crate) fn put_settings(out: &mut Vec<u8>, settings: &[(u16, u32)]) {
    put_header(out, settings.len() * 6, kind::SETTINGS, 0, 0);
    for &(id, value) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub(crate) fn put_settings_ack(out: &mut Vec<u8>) {
    put_header(out, 0, kind::SETTINGS, flag::ACK, 0);
}

pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

pub(crate) fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub(crate) fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_header(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

pub(crate) fn put_ping_ack(out: &mut Vec<u8>, opaque: &[u8]) {
    put_header(out, 8, kind::PING, flag::ACK, 0);
    out.extend_from_slice(opaque);
}

/// Appends a header block as a HEADERS frame and, past `max_frame` octets, CONTINUATION
/// frames.
pub(crate) fn put_headers(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[&[u8]],
    end_stream: bool,
    max_frame: usize,
) {
    let total: usize = block.iter().map(|part| part.len()).sum();
    let end = if end_stream { flag::END_STREAM } else { 0 };
    if total <= max_frame {
        put_header(out, total, kind::HEADERS, end | flag::END_HEADERS, stream);
        for part in block {
            out.extend_from_slice(part);
        }
        return;
    }
    let joined = block.concat();
    let mut chunks = joined.chunks(max_frame).peekable();
    let mut first = true;
    while let Some(chunk) = chunks.next() {
        let last = if chunks.peek().is_none() {
            flag::END_HEADERS
        } else {
            0
        };
        if first {
            put_header(out, chunk.len(), kind::HEADERS, end | last, stream);
            first = false;
        } else {
            put_header(out, chunk.len(), kind::CONTINUATION, last, stream);
        }
        out.extend_from_slice(chunk);
    }
}

/// Appends a DATA frame.
pub(crate) fn put_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    let flags = if end_stream { flag::END_STREAM } else { 0 };
    put_header(out, data.len(), kind::DATA, flags, stream);
    out.extend_from_slice(data);
}

/// A payload without its padding (section 6.1): `None` when the padding is longer than the
/// payload.
pub(crate) fn unpadded<'a>(header: &Header, payload: &'a [u8]) -> Option<&'a [u8]> {
    if !header.has(flag::PADDED) {
        return Some(payload);
    }
    let (&pad, rest) = payload.split_first()?;
    rest.len().checked_sub(pad as usize).map(|len| &rest[..len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_drops_the_reserved_bit() {
        let mut out = Vec::new();
        put_header(&mut out, 70_000, kind::HEADERS, flag::END_HEADERS, 7);
        assert_eq!(out.len(), HEADER_LEN);
        let header = Header::parse(&out).unwrap();
        assert_eq!(
            header,
            Header {
                len: 70_000,
                kind: kind::HEADERS,
                flags: flag::END_HEADERS,
                stream: 7
            }
        );
        out[5] |= 0x80;
        assert_eq!(Header::parse(&out).unwrap().stream, 7);
        assert_eq!(Header::parse(&out[..8]), None);
    }

    #[test]
    fn a_long_header_block_continues() {
        let mut out = Vec::new();
        let block = [7u8; 25];
        put_headers(&mut out, 3, &[&block[..20], &block[20..]], true, 10);
        let first = Header::parse(&out).unwrap();
        assert_eq!(
            (first.kind, first.len, first.flags),
            (kind::HEADERS, 10, flag::END_STREAM)
        );
        let second = Header::parse(&out[19..]).unwrap();
        assert_eq!(
            (second.kind, second.len, second.flags),
            (kind::CONTINUATION, 10, 0)
        );
        let third = Header::parse(&out[38..]).unwrap();
        assert_eq!(
            (third.kind, third.len, third.flags),
            (kind::CONTINUATION, 5, flag::END_HEADERS)
        );
        assert_eq!(out.len(), 3 * HEADER_LEN + 25);
    }

    #[test]
    fn padding_is_taken_off() {
        let padded = Header {
            len: 5,
            kind: kind::DATA,
            flags: flag::PADDED,
            stream: 1,
        };
        assert_eq!(unpadded(&padded, &[2, b'h', b'i', 0, 0]), Some(&b"hi"[..]));
        assert_eq!(unpadded(&padded, &[9, b'h']), None);
        assert_eq!(unpadded(&padded, &[]), None);
    }
}
