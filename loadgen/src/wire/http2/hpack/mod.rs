//! HPACK (RFC 7541) as the client speaks it: with no dynamic table on either side.
//!
//! The client's SETTINGS give the server a header table of 0 octets, so the server's encoder
//! can index nothing: every field it sends is a static-table index or a literal, and an entry
//! it adds is evicted at once. The client's own fields are literals never added to a table.
//! So decoding keeps no state from one block to the next, and only the values the client reads
//! are decoded: `:status`, `content-length` and the mock's two times. Every other field is
//! walked over, its Huffman code unread.

mod huffman;
mod huffman_table;

use gatebench_shared::clock::{RECEIVED_HEADER, STARTED_HEADER};

/// A header block that breaks HPACK (a connection error), or a response head HTTP/2 does
/// not allow (an error of its stream only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HpackError {
    /// The block cannot be decoded: the connection's compression state is lost.
    Compression,
    /// The block decodes, but is no response head (no or a bad `:status`, another
    /// pseudo-header).
    Malformed,
}

/// What the client reads of a response's head (or trailers).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    /// `:status`, 0 when there is none (trailers).
    pub status: u16,
    pub content_length: Option<u64>,
    /// The mock's `x-mock-received-ns` and `x-mock-started-ns`.
    pub received_ns: Option<u64>,
    pub started_ns: Option<u64>,
}

/// A header name the client looks for, as sent plain and as Huffman-coded (the code is
/// canonical, so equal names have equal codes).
#[derive(Debug)]
struct Name {
    plain: &'static [u8],
    coded: Vec<u8>,
}

impl Name {
    fn new(plain: &'static str) -> Name {
        Name {
            plain: plain.as_bytes(),
            coded: huffman::encode(plain.as_bytes()),
        }
    }

    fn is(&self, s: &Str) -> bool {
        if s.huffman {
            s.bytes == self.coded
        } else {
            s.bytes == self.plain
        }
    }
}

/// The names a response's decoding looks for, coded once per connection.
#[derive(Debug)]
pub(crate) struct Names {
    status: Name,
    content_length: Name,
    received: Name,
    started: Name,
}

impl Default for Names {
    fn default() -> Names {
        Names {
            status: Name::new(":status"),
            content_length: Name::new("content-length"),
            received: Name::new(RECEIVED_HEADER),
            started: Name::new(STARTED_HEADER),
        }
    }
}

/// A string literal as it is in the block.
struct Str<'a> {
    huffman: bool,
    bytes: &'a [u8],
}

/// What a field's name is, for the client.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Status,
    ContentLength,
    Received,
    Started,
    /// Another pseudo-header: not in a response.
    Pseudo,
    Other,
}

/// The static table's entries the client reads (RFC 7541, Appendix A): 1-7 are the request's
/// pseudo-headers, 8-14 `:status` with its value, 28 `content-length`.
const STATIC_ENTRIES: usize = 61;
const STATUSES: [u16; 7] = [200, 204, 206, 304, 400, 404, 500];

fn static_field(index: usize) -> Field {
    match index {
        1..=7 => Field::Pseudo,
        8..=14 => Field::Status,
        28 => Field::ContentLength,
        _ => Field::Other,
    }
}

/// Decodes a response's header block (or, with `trailers`, the trailers after its body).
pub(crate) fn decode_head(block: &[u8], names: &Names, trailers: bool) -> Result<Head, HpackError> {
    let mut head = Head::default();
    let mut src = Reader { rest: block };
    let mut fields = 0;
    let mut malformed = false;
    while let Some(&first) = src.rest.first() {
        let (field, value) = if first & 0x80 != 0 {
            // Indexed: only the static table exists.
            let index = src.integer(7)?;
            if index == 0 || index > STATIC_ENTRIES {
                return Err(HpackError::Compression);
            }
            let field = static_field(index);
            if field == Field::Status {
                if head.status != 0 {
                    malformed = true;
                }
                head.status = STATUSES[index - 8];
                fields += 1;
                continue;
            }
            (field, None)
        } else if first & 0xe0 == 0x20 {
            // A table size update: only to 0, the size the client allows, and before any field.
            if src.integer(5)? != 0 || fields > 0 {
                return Err(HpackError::Compression);
            }
            continue;
        } else {
            // A literal, with (01) or without (0000, 0001) indexing; what is indexed is evicted
            // at once by a table of 0 octets.
            let prefix = if first & 0x40 != 0 { 6 } else { 4 };
            let index = src.integer(prefix)?;
            let field = if index == 0 {
                let name = src.string()?;
                if names.status.is(&name) {
                    Field::Status
                } else if names.content_length.is(&name) {
                    Field::ContentLength
                } else if names.received.is(&name) {
                    Field::Received
                } else if names.started.is(&name) {
                    Field::Started
                } else if (name.huffman && huffman::starts_with_colon(name.bytes))
                    || (!name.huffman && name.bytes.first() == Some(&b':'))
                {
                    Field::Pseudo
                } else {
                    Field::Other
                }
            } else if index <= STATIC_ENTRIES {
                static_field(index)
            } else {
                return Err(HpackError::Compression);
            };
            (field, Some(src.string()?))
        };
        fields += 1;
        let read = |value: Option<Str>| -> Result<Option<u64>, HpackError> {
            value.map_or(Ok(None), |v| number(&v))
        };
        match field {
            Field::Status => {
                let status = read(value)?.filter(|s| (100..1000).contains(s));
                match status {
                    Some(s) if head.status == 0 => head.status = s as u16,
                    _ => malformed = true,
                }
            }
            Field::ContentLength => match read(value)? {
                Some(n) if head.content_length.is_none_or(|l| l == n) => {
                    head.content_length = Some(n)
                }
                _ => malformed = true,
            },
            Field::Received => head.received_ns = read(value)?,
            Field::Started => head.started_ns = read(value)?,
            Field::Pseudo => malformed = true,
            Field::Other => {}
        }
    }
    if malformed || (head.status == 0) != trailers {
        return Err(HpackError::Malformed);
    }
    Ok(head)
}

/// A decimal value, decoded: `None` when it is not one (a bad value of a field read as a
/// number makes the head malformed or, for the mock's times, leaves them out).
fn number(value: &Str) -> Result<Option<u64>, HpackError> {
    let mut room = [0u8; 24];
    let digits = if value.huffman {
        match huffman::decode(value.bytes, &mut room)? {
            Some(n) => &room[..n],
            None => return Ok(None),
        }
    } else {
        value.bytes
    };
    let digits = digits.trim_ascii();
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return Ok(None);
    }
    Ok(Some(
        digits
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0')),
    ))
}

/// The rest of a block, read from the front.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// An integer with an `n`-bit prefix (section 5.1), bounded to what a block can mean.
    fn integer(&mut self, n: u32) -> Result<usize, HpackError> {
        let (&first, mut rest) = self.rest.split_first().ok_or(HpackError::Compression)?;
        let max = (1usize << n) - 1;
        let mut value = first as usize & max;
        if value == max {
            let mut shift = 0;
            loop {
                let (&b, tail) = rest.split_first().ok_or(HpackError::Compression)?;
                rest = tail;
                value += ((b & 0x7f) as usize) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
                if shift > 28 {
                    return Err(HpackError::Compression);
                }
            }
        }
        self.rest = rest;
        Ok(value)
    }

    /// A string literal (section 5.2), still coded.
    fn string(&mut self) -> Result<Str<'a>, HpackError> {
        let huffman = self.rest.first().ok_or(HpackError::Compression)? & 0x80 != 0;
        let len = self.integer(7)?;
        if len > self.rest.len() {
            return Err(HpackError::Compression);
        }
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(Str { huffman, bytes })
    }
}

/// Appends an integer with an `n`-bit prefix whose high bits are `flags`.
pub(crate) fn put_integer(out: &mut Vec<u8>, flags: u8, n: u32, value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 0x80 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// Appends a plain (not Huffman-coded) string literal.
pub(crate) fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_integer(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// Appends a field without indexing, named by the static table's `index` or, when `None`,
/// by a literal name.
pub(crate) fn put_literal(out: &mut Vec<u8>, index: Option<usize>, name: &[u8], value: &[u8]) {
    match index {
        Some(i) => put_integer(out, 0, 4, i),
        None => {
            out.push(0);
            put_string(out, name);
        }
    }
    put_string(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(block: &[u8]) -> Result<Head, HpackError> {
        decode_head(block, &Names::default(), false)
    }

    #[test]
    fn rfc_7541_responses_decode_without_a_table() {
        // Appendix C.6.1: :status 302, cache-control, date, location, all Huffman-coded and
        // indexed (here evicted at once).
        let block = [
            0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0,
            0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81,
            0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e, 0x91, 0x9d, 0x29, 0xad, 0x17, 0x18,
            0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
        ];
        assert_eq!(
            head(&block),
            Ok(Head {
                status: 302,
                ..Head::default()
            })
        );
        // Appendix C.5.2 refers to the dynamic table, which the client never allows.
        assert_eq!(
            head(&[0x48, 0x83, 0x33, 0x30, 0x37, 0xc1]),
            Err(HpackError::Compression)
        );
    }

    #[test]
    fn the_fields_read_are_found_plain_and_coded() {
        let mut block = vec![0x20, 0x88];
        put_literal(&mut block, Some(28), b"", b"42");
        put_literal(&mut block, None, RECEIVED_HEADER.as_bytes(), b"17");
        block.push(0x40);
        let coded = huffman::encode(STARTED_HEADER.as_bytes());
        put_integer(&mut block, 0x80, 7, coded.len());
        block.extend_from_slice(&coded);
        let value = huffman::encode(b"123456789012345");
        put_integer(&mut block, 0x80, 7, value.len());
        block.extend_from_slice(&value);
        put_literal(&mut block, None, b"x-other", b"v");
        assert_eq!(
            head(&block),
            Ok(Head {
                status: 200,
                content_length: Some(42),
                received_ns: Some(17),
                started_ns: Some(123456789012345),
            })
        );
    }

    #[test]
    fn a_literal_status_is_read() {
        let mut block = Vec::new();
        put_literal(&mut block, Some(8), b"", b"503");
        assert_eq!(head(&block).map(|h| h.status), Ok(503));
        let mut block = Vec::new();
        put_literal(&mut block, None, b":status", b"103");
        assert_eq!(head(&block).map(|h| h.status), Ok(103));
    }

    #[test]
    fn heads_http2_forbids_are_malformed() {
        let mut two = vec![0x88, 0x89];
        assert_eq!(head(&two), Err(HpackError::Malformed), "two statuses");
        two.clear();
        put_literal(&mut two, None, b"x-a", b"1");
        assert_eq!(head(&two), Err(HpackError::Malformed), "no status");
        assert_eq!(head(&[0x88, 0x83]), Err(HpackError::Malformed), ":method");
        let mut bad = Vec::new();
        put_literal(&mut bad, Some(8), b"", b"2x0");
        assert_eq!(head(&bad), Err(HpackError::Malformed));
        let mut lengths = vec![0x88];
        put_literal(&mut lengths, Some(28), b"", b"1");
        put_literal(&mut lengths, Some(28), b"", b"2");
        assert_eq!(head(&lengths), Err(HpackError::Malformed));
        // Trailers carry no status.
        assert_eq!(
            decode_head(&[0x88], &Names::default(), true),
            Err(HpackError::Malformed)
        );
        assert!(decode_head(&[], &Names::default(), true).is_ok());
    }

    #[test]
    fn broken_blocks_are_compression_errors() {
        assert_eq!(head(&[0x80]), Err(HpackError::Compression), "index 0");
        assert_eq!(head(&[0xbe]), Err(HpackError::Compression), "index 62");
        assert_eq!(
            head(&[0x3f, 0xe1, 0x1f]),
            Err(HpackError::Compression),
            "size 4096"
        );
        assert_eq!(
            head(&[0x88, 0x20]),
            Err(HpackError::Compression),
            "late update"
        );
        assert_eq!(
            head(&[0x04, 0x85, b'a']),
            Err(HpackError::Compression),
            "short"
        );
        assert_eq!(
            head(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            Err(HpackError::Compression),
            "endless integer"
        );
    }

    #[test]
    fn integers_round_trip_across_their_prefix() {
        for (n, value) in [(5, 10), (5, 31), (5, 1337), (7, 127), (4, 1 << 20)] {
            let mut out = Vec::new();
            put_integer(&mut out, 0, n, value);
            assert_eq!(Reader { rest: &out }.integer(n), Ok(value));
        }
        let mut out = Vec::new();
        put_integer(&mut out, 0, 5, 1337);
        assert_eq!(out, [31, 154, 10], "RFC 7541, C.1.2");
    }
}
