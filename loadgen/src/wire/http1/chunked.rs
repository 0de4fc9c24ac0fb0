//! Decoding a `Transfer-Encoding: chunked` body as its bytes arrive (RFC 9112, section 7.1).
//!
//! The decoder is a state machine over whatever bytes are buffered: it hands out data as soon as
//! it has it and leaves an incomplete size line in the buffer for the next read.

use httparse::Status;

/// The longest chunk-size or trailer line accepted (extensions included).
const MAX_LINE: usize = 4096;

/// A chunked body that does not follow the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Expecting `size[;ext]\r\n`.
    Size,
    /// Inside a chunk, with this many data bytes still to come.
    Data(u64),
    /// Expecting the `\r\n` after a chunk's data.
    DataEnd,
    /// After the last (zero) chunk: trailer lines, then an empty line.
    Trailer,
    Done,
}

/// Where a chunked body is.
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder { state: State::Size }
    }
}

impl Decoder {
    /// Decodes as much of `input` as it can, calling `on_data` for each piece of body data.
    /// Returns how many bytes it consumed; the rest must be offered again with more after it.
    pub fn decode(
        &mut self,
        input: &[u8],
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<usize, ChunkError> {
        let mut at = 0;
        loop {
            let rest = &input[at..];
            match self.state {
                State::Size => match httparse::parse_chunk_size(rest) {
                    Ok(Status::Complete((used, 0))) => {
                        at += used;
                        self.state = State::Trailer;
                    }
                    Ok(Status::Complete((used, size))) => {
                        at += used;
                        self.state = State::Data(size);
                    }
                    Ok(Status::Partial) if rest.len() < MAX_LINE => return Ok(at),
                    _ => return Err(ChunkError),
                },
                State::Data(left) => {
                    let take = (left.min(rest.len() as u64)) as usize;
                    if take == 0 {
                        return Ok(at);
                    }
                    on_data(&rest[..take]);
                    at += take;
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        State::DataEnd
                    } else {
                        State::Data(left)
                    };
                }
                State::DataEnd => {
                    if rest.len() < 2 {
                        return Ok(at);
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(ChunkError);
                    }
                    at += 2;
                    self.state = State::Size;
                }
                State::Trailer => match rest.windows(2).position(|w| w == b"\r\n") {
                    Some(0) => {
                        at += 2;
                        self.state = State::Done;
                    }
                    Some(line) => at += line + 2,
                    None if rest.len() < MAX_LINE => return Ok(at),
                    None => return Err(ChunkError),
                },
                State::Done => return Ok(at),
            }
        }
    }

    /// True once the last chunk and the trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` split at every `step` bytes, as reads would deliver it; returns the data.
    fn decode_in_steps(wire: &[u8], step: usize) -> Result<(Vec<u8>, bool), ChunkError> {
        let mut decoder = Decoder::default();
        let (mut buffered, mut data) = (Vec::new(), Vec::new());
        for piece in wire.chunks(step) {
            buffered.extend_from_slice(piece);
            let used = decoder.decode(&buffered, |d| data.extend_from_slice(d))?;
            buffered.drain(..used);
        }
        Ok((data, decoder.is_done()))
    }

    #[test]
    fn decodes_chunks_split_anywhere() {
        let wire = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n";
        for step in 1..wire.len() {
            let (data, done) = decode_in_steps(wire, step).unwrap();
            assert_eq!(data, b"hello, world", "step {step}");
            assert!(done, "step {step}");
        }
    }

    #[test]
    fn skips_trailers() {
        let wire = b"3\r\nabc\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\n";
        let (data, done) = decode_in_steps(wire, 4).unwrap();
        assert_eq!((data.as_slice(), done), (&b"abc"[..], true));
    }

    #[test]
    fn stops_at_the_end_and_leaves_what_follows() {
        let mut decoder = Decoder::default();
        let used = decoder
            .decode(b"1\r\na\r\n0\r\n\r\nHTTP/1.1", |_| {})
            .unwrap();
        assert_eq!(used, 11);
        assert!(decoder.is_done());
    }

    #[test]
    fn an_unfinished_body_is_not_done() {
        let (data, done) = decode_in_steps(b"5\r\nhel", 2).unwrap();
        assert_eq!((data.as_slice(), done), (&b"hel"[..], false));
    }

    #[test]
    fn rejects_what_is_not_chunked() {
        assert_eq!(decode_in_steps(b"zz\r\n", 8), Err(ChunkError));
        assert_eq!(decode_in_steps(b"3\r\nabcX\r\n", 16), Err(ChunkError));
        assert_eq!(
            decode_in_steps(&[b'1'; MAX_LINE + 1], MAX_LINE + 1),
            Err(ChunkError)
        );
    }
}
