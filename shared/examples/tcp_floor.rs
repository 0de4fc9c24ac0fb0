//! The kernel's floor for an HTTP/1.1 exchange over loopback TCP: a client and a server that do
//! nothing in user space but one receive and one send a request, on level-triggered epoll (no
//! `epoll_ctl` a request), with every request and answer learned once and then only counted.
//! What they spend a request is, within a few tenths of a µs, what the kernel charges for the
//! exchange under that load: the reference a client's or a server's own cost is read against.
//! It is not a strict lower bound: system time also moves with how many events each wait
//! returns, by ±0.8 µs a request between processes of one run here. `scripts/bench-client-cost.sh`
//! runs them beside the real clients and servers.
//!
//! Run: cargo run --release -p gatebench-shared --example tcp_floor -- client ADDR PATH BODY_FILE CONNECTIONS SECONDS
//!      cargo run --release -p gatebench-shared --example tcp_floor -- server ADDR ANSWER_FILE
//! The client posts BODY_FILE (as JSON) to PATH on CONNECTIONS connections, closed loop, for
//! SECONDS, and prints `requests N`; each connection's first answer must be a 200 with a
//! `content-length`, and every later one is taken to be as long (an answer of another length
//! ends the run with an error). The server answers every
//! request with a 200 carrying ANSWER_FILE, or with ANSWER_FILE itself when it is a whole
//! response (`curl -si` saves one: the mock's own head, say); each connection's first request
//! is read for its length, and every later one on it is taken to be as long.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["client", addr, path, body, connections, seconds] => {
            client(addr, path, body, connections, seconds)
        }
        ["server", addr, answer] => server(addr, answer),
        _ => Err("usage: tcp_floor client ADDR PATH BODY_FILE CONNECTIONS SECONDS | server ADDR ANSWER_FILE".into()),
    };
    if let Err(message) = outcome {
        eprintln!("tcp_floor: {message}");
        std::process::exit(2);
    }
}

/// The most a first message's head may take before its end is found.
const MAX_HEAD: usize = 64 * 1024;

/// A connection's byte count: how long each message on it is, once learned from its first one,
/// and how many bytes of the current one have come.
struct Counted {
    stream: TcpStream,
    /// The first message's bytes, kept until its length is known.
    first: Vec<u8>,
    length: Option<usize>,
    have: usize,
}

impl Counted {
    fn new(stream: TcpStream) -> Self {
        Counted {
            stream,
            first: Vec::new(),
            length: None,
            have: 0,
        }
    }

    /// Receives once; returns how many whole messages are now in, `Ok(None)` at the end of the
    /// stream. `measure` reads the first message's head: the whole message's length once the
    /// head is in.
    fn receive(
        &mut self,
        buf: &mut [u8],
        measure: fn(&[u8]) -> Result<Option<usize>, String>,
    ) -> Result<Option<usize>, String> {
        let n = match self.stream.read(buf) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(err) if err.kind() == ErrorKind::WouldBlock => return Ok(Some(0)),
            Err(err) => return Err(format!("receive: {err}")),
        };
        if self.length.is_none() {
            self.first.extend_from_slice(&buf[..n]);
            let Some(length) = measure(&self.first)? else {
                if self.first.len() > MAX_HEAD {
                    return Err(format!("no end of head in the first {MAX_HEAD} bytes"));
                }
                return Ok(Some(0));
            };
            self.length = Some(length);
            self.have = std::mem::take(&mut self.first).len();
        } else {
            self.have += n;
        }
        let length = self.length.unwrap_or(usize::MAX);
        let whole = self.have / length;
        self.have %= length;
        Ok(Some(whole))
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        // A request or an answer of a few hundred bytes goes whole into an empty send buffer.
        match self.stream.write(bytes) {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(n) => Err(format!("send: {n} of {} bytes taken", bytes.len())),
            Err(err) => Err(format!("send: {err}")),
        }
    }
}

/// The body length `headers` announce, if they do.
fn content_length(headers: &[httparse::Header<'_>]) -> Option<Result<usize, String>> {
    let header = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))?;
    let value = String::from_utf8_lossy(header.value);
    Some(
        value
            .trim()
            .parse()
            .map_err(|_| format!("bad content-length {value:?}")),
    )
}

/// A request's whole length once its head is in (a body only with `content-length`).
fn request_length(bytes: &[u8]) -> Result<Option<usize>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(bytes) {
        Ok(httparse::Status::Partial) => Ok(None),
        Ok(httparse::Status::Complete(head)) => Ok(Some(
            head + content_length(request.headers).unwrap_or(Ok(0))?,
        )),
        Err(err) => Err(format!("bad request head: {err}")),
    }
}

/// An answer's whole length once its head is in: a 200 with a `content-length`.
fn answer_length(bytes: &[u8]) -> Result<Option<usize>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(bytes) {
        Ok(httparse::Status::Partial) => Ok(None),
        Ok(httparse::Status::Complete(head)) => {
            if let Some(code) = response.code.filter(|&code| code != 200) {
                return Err(format!("the server answered {code}, not 200"));
            }
            let body = content_length(response.headers)
                .ok_or("the server's answer has no content-length")??;
            Ok(Some(head + body))
        }
        Err(err) => Err(format!("bad answer head: {err}")),
    }
}

/// Level-triggered epoll over connections numbered by their index.
struct Poll(OwnedFd);

impl Poll {
    fn new() -> Result<Self, String> {
        // SAFETY: epoll_create1 takes no pointers; a valid descriptor is owned from here on.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(format!(
                "epoll_create1: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: fd was just created and is owned by nothing else.
        Ok(Poll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn add(&self, fd: i32, key: u64) -> Result<(), String> {
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: key,
        };
        // SAFETY: both descriptors are open and `event` outlives the call.
        let done =
            unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut event) };
        if done < 0 {
            return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Fills `events` with the ready connections, waiting at most 100 ms; returns how many.
    fn wait(&self, events: &mut [libc::epoll_event]) -> usize {
        // SAFETY: `events` is valid for its whole length for the call.
        let n = unsafe {
            libc::epoll_wait(
                self.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                100,
            )
        };
        n.max(0) as usize
    }
}

fn read_file(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|err| format!("cannot read {path}: {err}"))
}

fn client(
    addr: &str,
    path: &str,
    body: &str,
    connections: &str,
    seconds: &str,
) -> Result<(), String> {
    let body = read_file(body)?;
    let connections: usize = match connections.parse() {
        Ok(n) if n > 0 => n,
        _ => return Err("CONNECTIONS must be a whole number above 0".into()),
    };
    let run = seconds
        .parse()
        .ok()
        .and_then(|s: f64| Duration::try_from_secs_f64(s).ok())
        .filter(|run| !run.is_zero())
        .ok_or("SECONDS must be a positive number")?;
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);

    let poll = Poll::new()?;
    let mut conns = Vec::with_capacity(connections);
    for key in 0..connections {
        let stream =
            TcpStream::connect(addr).map_err(|err| format!("cannot connect to {addr}: {err}"))?;
        stream
            .set_nodelay(true)
            .map_err(|err| format!("nodelay: {err}"))?;
        stream
            .set_nonblocking(true)
            .map_err(|err| format!("nonblocking: {err}"))?;
        poll.add(stream.as_raw_fd(), key as u64)?;
        conns.push(Counted::new(stream));
    }
    let end = Instant::now()
        .checked_add(run)
        .ok_or("SECONDS is too long")?;
    for conn in &mut conns {
        conn.send(&request)?;
    }
    let mut done = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    while Instant::now() < end {
        let ready = poll.wait(&mut events);
        for key in events[..ready].iter().map(|event| event.u64) {
            let conn = &mut conns[key as usize];
            let Some(whole) = conn.receive(&mut buf, answer_length)? else {
                return Err("the server closed a connection".into());
            };
            // One request is out on each connection: more than one answer, or the start of
            // another, means the answers are not all as long as the first.
            if whole > 1 || (whole == 1 && conn.have != 0) {
                return Err("the server's answers are not all as long as its first".into());
            }
            if whole == 1 {
                done += 1;
                conn.send(&request)?;
            }
        }
    }
    println!("requests {done}");
    Ok(())
}

fn server(addr: &str, answer: &str) -> Result<(), String> {
    let body = read_file(answer)?;
    // A whole response (as `curl -si` saves one) is sent as it is; a body gets a short head.
    let answer = if body.starts_with(b"HTTP/1.1 ") {
        body
    } else {
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        answer.extend_from_slice(&body);
        answer
    };

    let listener =
        TcpListener::bind(addr).map_err(|err| format!("cannot listen on {addr}: {err}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|err| format!("nonblocking: {err}"))?;
    let poll = Poll::new()?;
    const LISTENER: u64 = u64::MAX;
    poll.add(listener.as_raw_fd(), LISTENER)?;
    // A closed connection leaves an empty place: keys stay the indexes they were given.
    let mut conns: Vec<Option<Counted>> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
    loop {
        let ready = poll.wait(&mut events);
        for key in events[..ready].iter().map(|event| event.u64) {
            if key == LISTENER {
                loop {
                    let stream = match listener.accept() {
                        Ok((stream, _)) => stream,
                        Err(err) if err.kind() == ErrorKind::WouldBlock => break,
                        Err(err) => return Err(format!("accept: {err}")),
                    };
                    let _ = stream.set_nodelay(true);
                    stream
                        .set_nonblocking(true)
                        .map_err(|err| format!("nonblocking: {err}"))?;
                    poll.add(stream.as_raw_fd(), conns.len() as u64)?;
                    conns.push(Some(Counted::new(stream)));
                }
                continue;
            }
            let Some(conn) = conns[key as usize].as_mut() else {
                continue;
            };
            match conn.receive(&mut buf, request_length) {
                Ok(Some(whole)) => {
                    for _ in 0..whole {
                        if conn.send(&answer).is_err() {
                            conns[key as usize] = None;
                            break;
                        }
                    }
                }
                // The end of the stream, or a reset: the connection's descriptor closes with it
                // and leaves the epoll set.
                Ok(None) | Err(_) => conns[key as usize] = None,
            }
        }
    }
}
