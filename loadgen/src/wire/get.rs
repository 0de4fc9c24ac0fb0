//! One plain `GET` in the clear, outside any measured run: a mock's configuration, its clock,
//! its request count. Blocking, a second at most, a body of 256 KiB at most.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::results::target::Target;
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
