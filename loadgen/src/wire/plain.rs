//! One blocking request in the clear, outside any measured run, that keeps what a measurement
//! of behaviour needs of the answer: its status, its headers and its body, whatever the status.
//! For a mock's control and record routes, and for a sample of what a gateway's refusal looks
//! like.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::model::target::Target;
use crate::wire::http1::head::{self, Framing};

/// A whole answer.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub status: u16,
    /// Header names in lower case, values as sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `method path` on `target`'s server with `headers` and `body` (sent with its length), read
/// whole within `timeout` and at most `max_bytes` of body. Says why when there is no whole
/// answer.
pub fn call(
    target: &Target,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
    timeout: Duration,
    max_bytes: usize,
) -> Result<Answer, String> {
    let url = format!("http://{}{path}", target.authority);
    if target.tls {
        return Err(format!("{url}: only http:// is asked, not https://"));
    }
    let deadline = Instant::now() + timeout;
    let mut stream = TcpStream::connect_timeout(&target.resolved, timeout)
        .map_err(|e| format!("nothing answered at {url} ({}): {e}", target.resolved))?;
    let _ = stream.set_nodelay(true);
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n",
        target.authority
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        request.push_str(&format!(
            "content-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    stream
        .set_write_timeout(Some(timeout))
        .and_then(|()| stream.write_all(&bytes))
        .map_err(|e| format!("{url}: sending the request: {e}"))?;
    let most = max_bytes.saturating_add(64 * 1024);
    let mut read = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("{url}: no whole answer within {timeout:?}"))?;
        let got = stream
            .set_read_timeout(Some(left))
            .and_then(|()| stream.read(&mut buf));
        match got {
            Ok(0) => break,
            Ok(n) if read.len() + n > most => {
                return Err(format!(
                    "{url}: the answer is larger than {max_bytes} bytes"
                ))
            }
            Ok(n) => {
                read.extend_from_slice(&buf[..n]);
                if whole(&read).is_some() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if read.is_empty() => return Err(format!("{url}: no answer: {e}")),
            Err(e) => return Err(format!("{url}: the answer broke off: {e}")),
        }
    }
    answer_of(&read).map_err(|why| format!("{url}: {why}"))
}

/// The answer in `bytes` once it is whole (`None` while it is not).
fn whole(bytes: &[u8]) -> Option<Answer> {
    let (head, used) = head::parse(bytes).ok()??;
    let body = &bytes[used..];
    match head.framing {
        Framing::Empty => Some(Vec::new()),
        Framing::Length(n) => body.get(..usize::try_from(n).ok()?).map(<[u8]>::to_vec),
        Framing::Chunked(mut decoder) => {
            let mut out = Vec::new();
            decoder.decode(body, |d| out.extend_from_slice(d)).ok()?;
            decoder.is_done().then_some(out)
        }
        Framing::UntilClose => None,
    }
    .map(|body| Answer {
        status: head.status,
        headers: headers_of(bytes),
        body,
    })
}

/// The answer in `bytes`, read until the server closed.
fn answer_of(bytes: &[u8]) -> Result<Answer, String> {
    if let Some(answer) = whole(bytes) {
        return Ok(answer);
    }
    match head::parse(bytes) {
        Ok(Some((head, used))) if matches!(head.framing, Framing::UntilClose) => Ok(Answer {
            status: head.status,
            headers: headers_of(bytes),
            body: bytes[used..].to_vec(),
        }),
        Ok(Some(_)) => Err("the body broke off".into()),
        Ok(None) if bytes.is_empty() => Err("the server closed without answering".into()),
        Ok(None) => Err("the answer's head broke off".into()),
        Err(_) => Err("the answer is not HTTP/1.x".into()),
    }
}

fn headers_of(bytes: &[u8]) -> Vec<(String, String)> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    if response.parse(bytes).is_err() {
        return Vec::new();
    }
    response
        .headers
        .iter()
        .filter(|h| !h.name.is_empty())
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_of_any_status_keeps_its_headers_and_body() {
        let bytes =
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\ncontent-length: 5\r\n\r\nslow!";
        let a = whole(bytes).unwrap();
        assert_eq!(a.status, 429);
        assert_eq!(a.text(), "slow!");
        assert!(a.headers.contains(&("retry-after".into(), "2".into())));
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
        assert_eq!(whole(chunked).unwrap().text(), "ok");
        assert!(whole(&chunked[..chunked.len() - 3]).is_none());
        let closed = b"HTTP/1.0 503 Service Unavailable\r\n\r\ndown";
        assert_eq!(answer_of(closed).unwrap().text(), "down");
        assert!(answer_of(b"").is_err());
    }
}
