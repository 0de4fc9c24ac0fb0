//! HPACK's Huffman code (RFC 7541, section 5.2): decoding the few values the client reads, and
//! encoding the names it looks for, to compare them as the server sent them.
//!
//! The code is canonical: codes of one length are consecutive and follow every shorter code.
//! A decoder therefore needs, per length, only the first code and where its symbols start in
//! the list of symbols sorted by code.

use super::huffman_table::CODES;
use super::HpackError;

/// The longest code (the end of string's), in bits.
const LONGEST: usize = 30;

/// Per length: the first code of that length, how many codes have it, and where their
/// symbols start in [`BY_CODE`].
struct Lengths {
    first: [u32; LONGEST + 1],
    count: [u32; LONGEST + 1],
    start: [u16; LONGEST + 1],
}

const LENGTHS: Lengths = lengths();

/// The 256 octets, sorted by code (length first, then value).
const BY_CODE: [u8; 256] = by_code();

const fn lengths() -> Lengths {
    let mut count = [0u32; LONGEST + 1];
    let mut i = 0;
    while i < 256 {
        count[CODES[i].1 as usize] += 1;
        i += 1;
    }
    let mut first = [0u32; LONGEST + 1];
    let mut start = [0u16; LONGEST + 1];
    let mut code = 0u32;
    let mut seen = 0u16;
    let mut len = 1;
    while len <= LONGEST {
        first[len] = code;
        start[len] = seen;
        code = (code + count[len]) << 1;
        seen += count[len] as u16;
        len += 1;
    }
    Lengths {
        first,
        count,
        start,
    }
}

const fn by_code() -> [u8; 256] {
    let mut out = [0u8; 256];
    let mut len = 1;
    let mut n = 0;
    while len <= LONGEST {
        let mut symbol = 0;
        while symbol < 256 {
            if CODES[symbol].1 as usize == len {
                out[n] = symbol as u8;
                n += 1;
            }
            symbol += 1;
        }
        len += 1;
    }
    out
}

/// Decodes `src` into `out`, which it fills to at most `out.len()` octets. Returns how many it
/// wrote, or `None` when the decoded string is longer than `out`. A code that is not the
/// canonical one, the end-of-string symbol, or padding other than up to 7 one bits is a
/// compression error.
pub(crate) fn decode(src: &[u8], out: &mut [u8]) -> Result<Option<usize>, HpackError> {
    let mut bits: u64 = 0;
    let mut held = 0usize;
    let mut input = src.iter();
    let mut n = 0;
    loop {
        while held <= 56 {
            match input.next() {
                Some(&b) => {
                    bits |= (b as u64) << (56 - held);
                    held += 8;
                }
                None => break,
            }
        }
        if held == 0 {
            return Ok(Some(n));
        }
        // The code is the shortest prefix that falls within its length's codes.
        let mut len = 5;
        let symbol = loop {
            if len > held.min(LONGEST) {
                // What is left is shorter than any code it starts: padding, which is fewer
                // than 8 bits, all ones.
                let padding_ok = held < 8 && (bits >> (64 - held)) == (1u64 << held) - 1;
                return if padding_ok {
                    Ok(Some(n))
                } else {
                    Err(HpackError::Compression)
                };
            }
            let prefix = (bits >> (64 - len)) as u32;
            let offset = prefix.wrapping_sub(LENGTHS.first[len]);
            if offset < LENGTHS.count[len] {
                break BY_CODE[LENGTHS.start[len] as usize + offset as usize];
            }
            len += 1;
        };
        if n == out.len() {
            return Ok(None);
        }
        out[n] = symbol;
        n += 1;
        bits <<= len;
        held -= len;
    }
}

/// `src` Huffman-coded, padded with ones to a whole octet.
pub(crate) fn encode(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len());
    let mut bits: u64 = 0;
    let mut held = 0u32;
    for &b in src {
        let (code, len) = CODES[b as usize];
        bits = (bits << len) | code as u64;
        held += len as u32;
        while held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
        }
    }
    if held > 0 {
        let pad = 8 - held;
        out.push(((bits << pad) | ((1 << pad) - 1)) as u8);
    }
    out
}

/// Whether a Huffman-coded string starts with `:` (code `1011100`, 7 bits): a pseudo-header's
/// name, decoded no further.
pub(crate) fn starts_with_colon(src: &[u8]) -> bool {
    src.first().is_some_and(|&b| b >> 1 == 0b101_1100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(src: &[u8]) -> Result<Vec<u8>, HpackError> {
        let mut out = [0u8; 256];
        let n = decode(src, &mut out)?.expect("fits");
        Ok(out[..n].to_vec())
    }

    #[test]
    fn the_code_table_is_canonical() {
        // Rebuilding each code from the lengths alone gives the table's code.
        for (symbol, &(code, len)) in CODES.iter().enumerate() {
            let len = len as usize;
            let rank = BY_CODE[LENGTHS.start[len] as usize..]
                .iter()
                .position(|&s| s as usize == symbol)
                .expect("listed");
            assert_eq!(LENGTHS.first[len] + rank as u32, code, "symbol {symbol}");
        }
    }

    #[test]
    fn rfc_7541_examples_decode() {
        // Appendix C.4.1 and C.6.1.
        let www = [
            0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        assert_eq!(decoded(&www).unwrap(), b"www.example.com");
        assert_eq!(decoded(&[0x64, 0x02]).unwrap(), b"302");
        assert_eq!(encode(b"www.example.com"), www);
        assert_eq!(encode(b"302"), [0x64, 0x02]);
    }

    #[test]
    fn every_octet_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decoded(&encode(&all)).unwrap(), all);
        for b in 0..=255u8 {
            assert_eq!(decoded(&encode(&[b, b'a', b])).unwrap(), [b, b'a', b]);
        }
        assert_eq!(decoded(&[]).unwrap(), b"");
    }

    #[test]
    fn bad_padding_and_the_end_of_string_are_errors() {
        // '0' is 00000: padded with zeros instead of ones.
        assert!(decoded(&[0x00]).is_err());
        // A whole octet of padding.
        assert!(decoded(&[0x07, 0xff]).is_err());
        // The end-of-string symbol itself, alone and before more octets.
        assert!(decoded(&[0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decoded(&[0xff; 12]).is_err());
    }

    #[test]
    fn a_string_longer_than_the_room_is_told() {
        let mut out = [0u8; 2];
        assert_eq!(decode(&encode(b"abc"), &mut out).unwrap(), None);
    }

    #[test]
    fn a_colon_is_seen_in_the_first_octet() {
        assert!(starts_with_colon(&encode(b":status")));
        assert!(!starts_with_colon(&encode(b"status")));
        assert!(!starts_with_colon(&[]));
    }
}
