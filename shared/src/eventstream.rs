//! AWS's event stream framing (`application/vnd.amazon.eventstream`), as Bedrock's
//! `converse-stream` sends events: each message is a prelude (total length, headers length,
//! the prelude's CRC-32), string headers, the payload, and the whole message's CRC-32, all
//! lengths and checksums big-endian.

/// Header value type 7: a UTF-8 string with a 16-bit length.
const STRING: u8 = 7;
/// Prelude (12 bytes) and trailing checksum (4 bytes).
const OVERHEAD: usize = 16;

/// One message: `headers` (name, string value) and `payload`, framed and checksummed.
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let headers_len: usize = headers
        .iter()
        .map(|(name, value)| 1 + name.len() + 1 + 2 + value.len())
        .sum();
    let total = OVERHEAD + headers_len + payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers_len as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    for (name, value) in headers {
        out.push(name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.push(STRING);
        out.extend_from_slice(&(value.len() as u16).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// An event message (`:message-type: event`) of type `event_type` with a JSON payload.
pub fn event(event_type: &str, json: &[u8]) -> Vec<u8> {
    encode(
        &[
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        json,
    )
}

/// An exception message (`:message-type: exception`) of type `exception_type`.
pub fn exception(exception_type: &str, json: &[u8]) -> Vec<u8> {
    encode(
        &[
            (":exception-type", exception_type),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json,
    )
}

/// A message read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub headers: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Message {
    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why bytes are not a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("an event stream message's checksum does not match")]
    Checksum,
    #[error("an event stream message is malformed")]
    Malformed,
}

/// The first message of `bytes` and the bytes it took, or `Ok(None)` when `bytes` holds less
/// than one whole message.
pub fn decode(bytes: &[u8]) -> Result<Option<(Message, usize)>, DecodeError> {
    if bytes.len() < 12 {
        return Ok(None);
    }
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let total = word(0) as usize;
    let headers_len = word(4) as usize;
    if crc32fast::hash(&bytes[..8]) != word(8) {
        return Err(DecodeError::Checksum);
    }
    if total < OVERHEAD + headers_len {
        return Err(DecodeError::Malformed);
    }
    if bytes.len() < total {
        return Ok(None);
    }
    if crc32fast::hash(&bytes[..total - 4]) != word(total - 4) {
        return Err(DecodeError::Checksum);
    }
    let mut headers = Vec::new();
    let mut at = 12;
    let end = 12 + headers_len;
    while at < end {
        let name_len = bytes[at] as usize;
        let name = bytes
            .get(at + 1..at + 1 + name_len)
            .ok_or(DecodeError::Malformed)?;
        at += 1 + name_len;
        if bytes.get(at) != Some(&STRING) || at + 3 > end {
            return Err(DecodeError::Malformed);
        }
        let value_len = u16::from_be_bytes([bytes[at + 1], bytes[at + 2]]) as usize;
        let value = bytes
            .get(at + 3..at + 3 + value_len)
            .ok_or(DecodeError::Malformed)?;
        at += 3 + value_len;
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| DecodeError::Malformed);
        headers.push((text(name)?, text(value)?));
    }
    if at != end {
        return Err(DecodeError::Malformed);
    }
    let payload = bytes[end..total - 4].to_vec();
    Ok(Some((Message { headers, payload }, total)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_a_flipped_bit_is_caught() {
        let one = event(
            "contentBlockDelta",
            br#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
        );
        let two = exception("throttlingException", br#"{"message":"slow down"}"#);
        let both = [one.clone(), two.clone()].concat();
        let (first, used) = decode(&both).unwrap().unwrap();
        assert_eq!(used, one.len());
        assert_eq!(first.header(":event-type"), Some("contentBlockDelta"));
        assert_eq!(first.header(":message-type"), Some("event"));
        assert_eq!(
            first.payload,
            br#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#
        );
        let (second, _) = decode(&both[used..]).unwrap().unwrap();
        assert_eq!(
            second.header(":exception-type"),
            Some("throttlingException")
        );
        assert_eq!(decode(&one[..one.len() - 1]), Ok(None));
        let mut bad = one.clone();
        bad[20] ^= 1;
        assert_eq!(decode(&bad), Err(DecodeError::Checksum));
    }
}
