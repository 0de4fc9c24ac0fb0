//! A response payload assembled from shared pre-encoded pieces, without allocating, and the
//! [`Sink`] that templates fill.
//!
//! A body or SSE event is a short list of pieces: literal `Bytes` from the catalog, the model name
//! sliced out of the request body, and a few decimal numbers (usage counts) written into an inline
//! buffer. hyper writes the pieces with vectored I/O, so nothing is copied into a new buffer. The
//! own HTTP/1.1 server skips the list: a stream's events are filled straight into its write
//! buffer, which is also a [`Sink`].

use std::io::IoSlice;

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Most pieces a payload holds; the largest body (a whole chat completion) needs 11. A stream
/// event with more (the Responses API's last, 13) leaves as two frames: every payload is moved a
/// few times per frame, and two more pieces for every frame cost streams about 4% (BENCHMARKS.md).
pub const MAX_PIECES: usize = 12;

/// Appends `n` in decimal (`itoa`: two digits a step). Out of line: inlined into a stream's
/// event filling, it cost the events more than it saved.
#[inline(never)]
pub fn put_decimal(out: &mut BytesMut, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Digits of `n` in decimal.
#[inline]
pub fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Appends a chunk's size line: `len` in upper-case hex (as hyper writes it) and CRLF.
#[inline(always)]
pub fn put_chunk_size(out: &mut BytesMut, len: usize) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let digit = |shift: usize| HEX[(len >> shift) & 0xF];
    // Most events' lines have two or three digits: written as one store, not a copy.
    match len {
        0x10..=0xFF => out.put_slice(&[digit(4), digit(0), b'\r', b'\n']),
        0x100..=0xFFF => out.put_slice(&[digit(8), digit(4), digit(0), b'\r', b'\n']),
        _ => {
            let width = (usize::BITS - len.leading_zeros()).div_ceil(4).max(1) as usize;
            let mut line = [0u8; 18];
            for (i, at) in (0..width).rev().enumerate() {
                line[at] = digit(4 * i);
            }
            line[width..width + 2].copy_from_slice(b"\r\n");
            out.put_slice(&line[..width + 2]);
        }
    }
}

/// Where a filled template or event goes, piece by piece.
pub trait Sink {
    /// Appends shared bytes.
    fn put(&mut self, bytes: &Bytes);
    /// Appends a decimal number.
    fn put_number(&mut self, n: u64);
    /// Appends a whole event built as a payload (tool calls and faults).
    fn put_payload(&mut self, payload: Payload);
    /// Says that an event of `len()` bytes is put next. Only the own server's chunked write
    /// buffer ([`Chunks`]) asks for the length, to write the chunk's size line first; every
    /// other sink ignores it and never computes it.
    #[inline(always)]
    fn open(&mut self, _len: impl FnOnce() -> usize) {}
    /// Appends shared bytes that are a whole event.
    #[inline(always)]
    fn put_event(&mut self, bytes: &Bytes) {
        self.open(|| bytes.len());
        self.put(bytes);
    }
}

/// The own HTTP/1.1 server's write buffer while it writes one event of a body. In a chunked
/// body an event that says its length ([`Sink::open`]) is framed as it begins: its size line
/// goes in first, and nothing is moved. One that does not say it is framed after it is written
/// (`h1::encode::close_chunk` moves it behind its line).
pub struct Chunks<'a> {
    /// The buffer: written straight into only by what frames itself (a whole body with a
    /// `content-length`) or is framed after (`h1::encode::close_chunk`).
    pub(crate) out: &'a mut BytesMut,
    chunked: bool,
    /// Bytes of the size line written for this event (0: none yet).
    line: usize,
}

impl<'a> Chunks<'a> {
    /// An event about to be written at the end of `out`; `chunked` for a chunked body.
    #[inline]
    pub fn new(out: &'a mut BytesMut, chunked: bool) -> Chunks<'a> {
        Chunks {
            out,
            chunked,
            line: 0,
        }
    }

    /// Bytes of the size line written in front of this event: 0 when it did not say its
    /// length (or the body is not chunked).
    pub fn line(&self) -> usize {
        self.line
    }
}

impl Sink for Chunks<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &Bytes) {
        self.out.extend_from_slice(bytes);
    }

    #[inline(always)]
    fn put_number(&mut self, n: u64) {
        put_decimal(self.out, n);
    }

    fn put_payload(&mut self, payload: Payload) {
        self.open(|| payload.len());
        payload.copy_to(self.out);
    }

    #[inline(always)]
    fn open(&mut self, len: impl FnOnce() -> usize) {
        debug_assert_eq!(self.line, 0, "an event says its length once");
        if self.chunked {
            let len = len();
            if len > 0 {
                let before = self.out.len();
                put_chunk_size(self.out, len);
                self.line = self.out.len() - before;
            }
        }
    }
}

impl Sink for BytesMut {
    fn put(&mut self, bytes: &Bytes) {
        self.extend_from_slice(bytes);
    }

    fn put_number(&mut self, n: u64) {
        put_decimal(self, n);
    }

    fn put_payload(&mut self, payload: Payload) {
        payload.copy_to(self);
    }
}

impl Sink for Payload {
    fn put(&mut self, bytes: &Bytes) {
        self.push_bytes(bytes);
    }

    fn put_number(&mut self, n: u64) {
        self.push_number(n);
    }

    fn put_payload(&mut self, payload: Payload) {
        if self.is_empty() {
            *self = payload;
        } else {
            for piece in &payload.pieces[payload.next..payload.count] {
                self.push(piece.clone());
            }
        }
    }
}

/// One frame, and a second when what was put has more pieces than a frame holds (the Responses
/// API's last event): a stream event on hyper's path.
#[derive(Debug, Default)]
pub struct Frames {
    pub first: Payload,
    pub second: Option<Payload>,
}

impl Frames {
    fn frame(&mut self) -> &mut Payload {
        if self.first.count < MAX_PIECES && self.second.is_none() {
            &mut self.first
        } else {
            self.second.get_or_insert_with(Payload::new)
        }
    }
}

impl Sink for Frames {
    fn put(&mut self, bytes: &Bytes) {
        self.frame().push_bytes(bytes);
    }

    fn put_number(&mut self, n: u64) {
        self.frame().push_number(n);
    }

    fn put_payload(&mut self, payload: Payload) {
        self.first.put_payload(payload);
    }
}

/// One piece of a payload.
#[derive(Debug, Clone, Default)]
pub enum Piece {
    #[default]
    Empty,
    /// Pre-encoded bytes shared with the catalog, or a slice of the request body.
    Shared(Bytes),
    /// A decimal number, digits in `digits[start..]`.
    Number { digits: [u8; 20], start: u8 },
}

impl Piece {
    /// A decimal number as a piece (`itoa`'s two digits a step: a digit a step cost about
    /// twice as much for the two- and three-digit numbers of a usage block).
    #[inline]
    pub fn number(value: u64) -> Piece {
        let mut text = itoa::Buffer::new();
        let text = text.format(value).as_bytes();
        let mut digits = [0u8; 20];
        let start = digits.len() - text.len();
        digits[start..].copy_from_slice(text);
        Piece::Number {
            digits,
            start: start as u8,
        }
    }

    /// The piece's bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Piece::Empty => &[],
            Piece::Shared(bytes) => bytes,
            Piece::Number { digits, start } => &digits[*start as usize..],
        }
    }

    fn advance(&mut self, cnt: usize) {
        match self {
            Piece::Empty => debug_assert_eq!(cnt, 0),
            Piece::Shared(bytes) => bytes.advance(cnt),
            Piece::Number { start, .. } => *start += cnt as u8,
        }
    }
}

/// An ordered list of pieces that hyper writes as one body frame (a `Buf`).
#[derive(Debug, Clone, Default)]
pub struct Payload {
    pieces: [Piece; MAX_PIECES],
    count: usize,
    next: usize,
    remaining: usize,
}

impl Payload {
    /// An empty payload.
    pub fn new() -> Payload {
        Payload::default()
    }

    /// Appends a piece. Templates are checked against [`MAX_PIECES`] when the catalog is
    /// built, so a full payload here is a programming error.
    pub fn push(&mut self, piece: Piece) {
        let len = piece.bytes().len();
        self.push_sized(piece, len);
    }

    /// Appends a piece of `len` bytes. Inlined into each filling loop, with the length its
    /// caller already knows: out of line, a push cost about 40 instructions, a fifth of them
    /// the call's own.
    #[inline(always)]
    fn push_sized(&mut self, piece: Piece, len: usize) {
        let Some(slot) = self.pieces.get_mut(self.count) else {
            panic!("payload template over {MAX_PIECES} pieces");
        };
        *slot = piece;
        self.remaining += len;
        self.count += 1;
    }

    /// Appends shared bytes.
    #[inline]
    pub fn push_bytes(&mut self, bytes: &Bytes) {
        if !bytes.is_empty() {
            self.push_sized(Piece::Shared(bytes.clone()), bytes.len());
        }
    }

    /// Appends a decimal number.
    #[inline]
    pub fn push_number(&mut self, n: u64) {
        let piece = Piece::number(n);
        let len = match &piece {
            Piece::Number { start, .. } => 20 - usize::from(*start),
            Piece::Empty | Piece::Shared(_) => 0,
        };
        self.push_sized(piece, len);
    }

    /// Bytes left to send.
    pub fn len(&self) -> usize {
        self.remaining
    }

    /// True when nothing is left to send.
    pub fn is_empty(&self) -> bool {
        self.remaining == 0
    }

    /// Appends what is left of the payload to `out`, piece by piece (the own HTTP/1.1
    /// server's one copy; cheaper than walking it as a `Buf`).
    pub fn copy_to(&self, out: &mut BytesMut) {
        out.reserve(self.remaining);
        for piece in &self.pieces[self.next..self.count] {
            out.extend_from_slice(piece.bytes());
        }
    }

    /// Appends the bytes left to `out`, and leaves none (the pieces are dropped with the
    /// payload): sent without moving the payload out of its body.
    #[inline]
    pub fn copy_out(&mut self, out: &mut BytesMut) {
        self.copy_to(out);
        self.next = self.count;
        self.remaining = 0;
    }

    /// The payload as one contiguous vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.remaining);
        for piece in &self.pieces[self.next..self.count] {
            out.extend_from_slice(piece.bytes());
        }
        out
    }
}

impl Buf for Payload {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        self.pieces[self.next..self.count]
            .iter()
            .map(Piece::bytes)
            .find(|b| !b.is_empty())
            .unwrap_or(&[])
    }

    fn advance(&mut self, mut cnt: usize) {
        assert!(cnt <= self.remaining, "advance past the end of a payload");
        self.remaining -= cnt;
        while cnt > 0 {
            let piece = &mut self.pieces[self.next];
            let here = piece.bytes().len();
            if cnt < here {
                piece.advance(cnt);
                return;
            }
            cnt -= here;
            *piece = Piece::Empty;
            self.next += 1;
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut filled = 0;
        for piece in &self.pieces[self.next..self.count] {
            if filled == dst.len() {
                break;
            }
            let bytes = piece.bytes();
            if !bytes.is_empty() {
                dst[filled] = IoSlice::new(bytes);
                filled += 1;
            }
        }
        filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Payload {
        let mut frame = Payload::new();
        frame.push_bytes(&Bytes::from_static(b"{\"n\":"));
        frame.push(Piece::number(1234567));
        frame.push_bytes(&Bytes::new());
        frame.push_bytes(&Bytes::from_static(b"}"));
        frame
    }

    #[test]
    fn a_chunk_size_line_is_upper_case_hex_of_any_width() {
        for len in [
            0usize,
            1,
            0xF,
            0x10,
            0xFF,
            0x100,
            0xABC,
            0xFFF,
            0x1000,
            0xFFFF_FFFF,
            usize::MAX,
        ] {
            let mut out = BytesMut::new();
            put_chunk_size(&mut out, len);
            assert_eq!(&out[..], format!("{len:X}\r\n").as_bytes());
        }
        for n in [0u64, 9, 10, 99, 100, 12_345, u64::MAX] {
            assert_eq!(decimal_len(n), n.to_string().len());
        }
    }

    #[test]
    fn an_event_that_says_its_length_gets_its_size_line_first() {
        let mut out = BytesMut::from(&b"head"[..]);
        let mut chunks = Chunks::new(&mut out, true);
        chunks.put_event(&Bytes::from_static(b"data: x\n\n"));
        assert_eq!(chunks.line(), 3);
        assert_eq!(&out[..], b"head9\r\ndata: x\n\n");
        // Not chunked: nothing in front.
        let mut out = BytesMut::new();
        let mut chunks = Chunks::new(&mut out, false);
        chunks.put_payload(sample());
        assert_eq!(chunks.line(), 0);
        assert_eq!(&out[..], &sample().to_vec()[..]);
    }

    #[test]
    fn numbers_are_decimal() {
        for n in [0, 7, 10, 1234567, u64::MAX] {
            assert_eq!(Piece::number(n).bytes(), n.to_string().as_bytes());
        }
    }

    #[test]
    fn reads_as_one_buffer_across_pieces() {
        let mut frame = sample();
        assert_eq!(frame.remaining(), 13);
        assert_eq!(frame.to_vec(), b"{\"n\":1234567}");
        let mut out = Vec::new();
        // Advance by odd amounts so cuts land inside pieces.
        while frame.has_remaining() {
            let take = frame.chunk().len().min(3);
            out.extend_from_slice(&frame.chunk()[..take]);
            frame.advance(take);
        }
        assert_eq!(out, b"{\"n\":1234567}");
    }

    #[test]
    fn vectored_skips_empty_pieces_and_respects_dst() {
        let mut frame = sample();
        let mut dst = [IoSlice::new(&[]); 8];
        assert_eq!(frame.chunks_vectored(&mut dst), 3);
        let mut small = [IoSlice::new(&[]); 2];
        assert_eq!(frame.chunks_vectored(&mut small), 2);
        frame.advance(6);
        let mut dst = [IoSlice::new(&[]); 8];
        assert_eq!(frame.chunks_vectored(&mut dst), 2);
        assert_eq!(&*dst[0], b"234567");
    }
}
