//! One plain `GET` in the clear, outside any measured run: a mock's configuration, its clock,
//! its request count. Blocking, a second at most, a body of 256 KiB at most (`get`); or a larger
//! body read within a given time, with the reason when it cannot be (`get_limited`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::model::target::Target;
use crate::wire::http1::head::{self, Framing};

/// Largest body read.
const MAX_BYTES: usize = 256 * 1024;

/// The body of `GET path` on `target`'s server when it answers 200, whole, within a second.
/// Asked in the clear only: an `https://` target is not asked (its disclosure says nothing of
/// the upstream).
pub fn get(target: &Target, path: &str) -> Option<String> {
    if target.tls {
        return None;
    }
    fetch(connect(target)?, target, path)
}

/// A connection to `target`'s server, opened within a second.
pub fn connect(target: &Target) -> Option<TcpStream> {
    let timeout = Duration::from_secs(1);
    let stream = TcpStream::connect_timeout(&target.resolved, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    Some(stream)
}

/// The body of `GET path` sent on `stream` (then closed), when it answers 200, whole, within a
/// second.
pub fn fetch(mut stream: TcpStream, target: &Target, path: &str) -> Option<String> {
    let timeout = Duration::from_secs(1);
    let request = format!(
        "GET {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        target.authority
    );
    stream.write_all(request.as_bytes()).ok()?;
    // One second in all, however slowly the answer trickles in.
    let deadline = Instant::now() + timeout;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())?;
        stream.set_read_timeout(Some(left)).ok()?;
        match stream.read(&mut buf).ok()? {
            0 => break,
            n if bytes.len() + n > MAX_BYTES => return None,
            n => bytes.extend_from_slice(&buf[..n]),
        }
    }
    let (head, used) = head::parse(&bytes).ok()??;
    if head.status != 200 {
        return None;
    }
    let body = &bytes[used..];
    let body = match head.framing {
        Framing::Length(n) => body.get(..usize::try_from(n).ok()?)?,
        Framing::UntilClose => body,
        // The mock answers with a length; anything else is not the mock.
        Framing::Chunked(_) | Framing::Empty => return None,
    };
    std::str::from_utf8(body).ok().map(str::to_string)
}

/// The body of `GET path` on `target`'s server when it answers 200, whole, within `timeout`, in
/// any framing (chunked included: Go's and Node's servers chunk a body they write in parts), of
/// at most `max_bytes`. Unlike [`get`], it says why not: nothing answering, another status, a
/// body too large, too slow, or not text.
pub fn get_limited(
    target: &Target,
    path: &str,
    max_bytes: usize,
    timeout: Duration,
) -> Result<String, String> {
    let url = format!("http://{}{path}", target.authority);
    if target.tls {
        return Err(format!("{url}: only http:// is read, not https://"));
    }
    let mut stream = TcpStream::connect_timeout(&target.resolved, timeout)
        .map_err(|e| format!("nothing answered at {url} ({}): {e}", target.resolved))?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n",
        target.authority
    );
    let deadline = Instant::now() + timeout;
    stream
        .set_write_timeout(Some(timeout))
        .and_then(|()| stream.write_all(request.as_bytes()))
        .map_err(|e| format!("{url}: sending the request: {e}"))?;
    // Room for the head and the chunks' framing beside the body.
    let most = max_bytes.saturating_add(64 * 1024);
    let mut bytes = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("{url}: no whole answer within {timeout:?}"))?;
        let read = stream
            .set_read_timeout(Some(left))
            .and_then(|()| stream.read(&mut buf));
        match read {
            Ok(0) => break,
            Ok(n) if bytes.len() + n > most => {
                return Err(format!(
                    "{url}: the answer is larger than {max_bytes} bytes"
                ))
            }
            Ok(n) => {
                bytes.extend_from_slice(&buf[..n]);
                if is_whole(&bytes) {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if bytes.is_empty() => return Err(format!("{url}: no answer: {e}")),
            Err(e) => return Err(format!("{url}: the answer broke off: {e}")),
        }
    }
    let body = body_of(&bytes).map_err(|why| format!("{url}: {why}"))?;
    if body.len() > max_bytes {
        return Err(format!(
            "{url}: the answer is larger than {max_bytes} bytes"
        ));
    }
    String::from_utf8(body).map_err(|_| format!("{url}: the answer is not UTF-8 text"))
}

/// True once `bytes` hold a whole response, so a server that keeps the connection open
/// despite `connection: close` is not waited for.
fn is_whole(bytes: &[u8]) -> bool {
    let Ok(Some((head, used))) = head::parse(bytes) else {
        return false;
    };
    match head.framing {
        _ if head.status != 200 => true,
        Framing::Empty => true,
        Framing::Length(n) => (bytes.len() - used) as u64 >= n,
        // Decoded once the last chunk is in sight, not on every read.
        Framing::Chunked(_) => bytes.ends_with(b"0\r\n\r\n") && body_of(bytes).is_ok(),
        Framing::UntilClose => false,
    }
}

/// The body of a whole response (read until the server closed, or whole), when its status is
/// 200.
fn body_of(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let (head, used) = match head::parse(bytes) {
        Ok(Some(parsed)) => parsed,
        Ok(None) if bytes.is_empty() => return Err("the server closed without answering".into()),
        Ok(None) => return Err("the answer's head broke off".into()),
        Err(_) => return Err("the answer is not HTTP/1.x".into()),
    };
    if head.status != 200 {
        return Err(format!("answered {} instead of 200", head.status));
    }
    let body = &bytes[used..];
    match head.framing {
        Framing::Empty => Ok(Vec::new()),
        Framing::UntilClose => Ok(body.to_vec()),
        Framing::Length(n) => usize::try_from(n)
            .ok()
            .and_then(|n| body.get(..n))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| format!("the body broke off before its {n} bytes")),
        Framing::Chunked(mut decoder) => {
            let mut out = Vec::new();
            decoder
                .decode(body, |data| out.extend_from_slice(data))
                .map_err(|_| "the chunked body is malformed".to_string())?;
            if !decoder.is_done() {
                return Err("the chunked body broke off".into());
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_read_in_any_framing() {
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
            3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(body_of(chunked).unwrap(), b"abcde");
        let sized = b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nxyz";
        assert_eq!(body_of(sized).unwrap(), b"xyz");
        let closed = b"HTTP/1.0 200 OK\r\n\r\nuntil close";
        assert_eq!(body_of(closed).unwrap(), b"until close");
        assert!(is_whole(chunked) && is_whole(sized) && !is_whole(closed));
        assert!(!is_whole(&chunked[..chunked.len() - 2]));
        assert!(!is_whole(&sized[..sized.len() - 1]));
    }

    #[test]
    fn what_is_not_a_whole_200_says_so() {
        let missing = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
        assert!(body_of(missing).unwrap_err().contains("404"));
        let cut = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nab";
        assert!(body_of(cut).unwrap_err().contains("broke off"));
        let short = b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nabc";
        assert!(body_of(short).unwrap_err().contains("9 bytes"));
        assert!(body_of(b"").unwrap_err().contains("closed"));
    }
}
