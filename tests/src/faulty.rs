//! Servers that misbehave on purpose, on loopback, for provoking each failure kind for real.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// A chat completion, for the servers whose framing is odd but whose answer is right.
const CHAT_COMPLETION: &str = "{\"id\":\"c\",\"object\":\"chat.completion\",\"created\":0,\"model\":\"m\",\
    \"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}";

/// How a faulty server answers every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers a completion with `connection: close`, then closes.
    CloseEach,
    /// Answers a completion with keep-alive, then closes the idle connection without a word.
    CloseIdle,
    /// Answers a completion in three chunks with a trailer section.
    ChunkedTrailers,
    /// Answers a completion as HTTP/1.0 without a length: the body ends at the close.
    UntilClose,
    /// Declares a 1,000-byte body, sends 20 bytes and closes.
    ShortBody,
    /// Answers a completion after 2 ms, one request at a time across all connections (a
    /// server with the capacity of 500 requests a second).
    OneAtATime,
    /// Resets the connection (RST) instead of answering.
    Reset,
    /// Reads the request and never answers.
    Stall,
    /// Answers a stream that ends cleanly without `data: [DONE]`.
    TruncatedStream,
    /// Answers 200 with a body that is not JSON.
    Garbage,
    /// Answers 503 in OpenAI's error shape.
    Unavailable,
    /// Answers 200 and streams output events, one a millisecond, without end.
    EndlessStream,
    /// Answers 200 and streams bytes that never end an event, as fast as they are read.
    EndlessEvent,
}

/// Starts a faulty server on `127.0.0.1:0`; it lives until the test process ends.
pub fn start_faulty(fault: Fault) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, fault));
        }
    });
    addr
}

fn serve(mut stream: TcpStream, fault: Fault) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    while read_request(&mut stream, &mut buf) {
        let framed = |head: &str, body: &str| format!("{head}\r\n{body}").into_bytes();
        let odd: Option<(Vec<u8>, bool)> = match fault {
            Fault::CloseEach => Some((
                framed(
                    &format!(
                        "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: {}\r\n",
                        CHAT_COMPLETION.len()
                    ),
                    CHAT_COMPLETION,
                ),
                true,
            )),
            Fault::CloseIdle => Some((
                framed(
                    &format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n",
                        CHAT_COMPLETION.len()
                    ),
                    CHAT_COMPLETION,
                ),
                true,
            )),
            Fault::ChunkedTrailers => {
                let (a, b) = CHAT_COMPLETION.split_at(10);
                let (b, c) = b.split_at(30);
                let chunks: String = [a, b, c]
                    .iter()
                    .map(|p| format!("{:x};x=1\r\n{p}\r\n", p.len()))
                    .collect();
                let body = format!("{chunks}0\r\nx-checksum: 1\r\n\r\n");
                Some((
                    framed("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n", &body),
                    false,
                ))
            }
            Fault::UntilClose => Some((framed("HTTP/1.0 200 OK\r\n", CHAT_COMPLETION), true)),
            Fault::OneAtATime => {
                static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
                let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
                std::thread::sleep(Duration::from_millis(2));
                Some((
                    framed(
                        &format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n",
                            CHAT_COMPLETION.len()
                        ),
                        CHAT_COMPLETION,
                    ),
                    false,
                ))
            }
            Fault::ShortBody => Some((
                framed(
                    "HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n",
                    &CHAT_COMPLETION[..20],
                ),
                true,
            )),
            _ => None,
        };
        if let Some((reply, close)) = odd {
            // A reply that ends with the close is corked, so the kernel sends it and the FIN
            // together when the stream drops: a client never sees the answer of a connection
            // that still looks open. Uncorked, this thread may be held between the write and
            // the close on a loaded machine, the client sends its next request meanwhile, and
            // the close resets it: a race no client can win, not a fault of the client. The
            // kernel holds a cork for about 200 ms only, so a hold longer than that still sends
            // the answer first: a test that reuses connections leaves them idle for far longer.
            if close {
                let _ = socket2::SockRef::from(&stream).set_tcp_cork(true);
            }
            if stream.write_all(&reply).is_err() || close {
                return;
            }
            continue;
        }
        let reply: &[u8] = match fault {
            Fault::Reset => {
                let socket = socket2::SockRef::from(&stream);
                let _ = socket.set_linger(Some(Duration::ZERO));
                return;
            }
            Fault::Stall => {
                std::thread::sleep(Duration::from_secs(3600));
                return;
            }
            Fault::EndlessStream | Fault::EndlessEvent => {
                endless(&mut stream, fault == Fault::EndlessStream);
                return;
            }
            Fault::TruncatedStream => b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                transfer-encoding: chunked\r\n\r\n\
                16\r\ndata: {\"choices\":[]}\n\n\r\n0\r\n\r\n",
            Fault::Garbage => b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
            Fault::CloseEach
            | Fault::CloseIdle
            | Fault::ChunkedTrailers
            | Fault::UntilClose
            | Fault::ShortBody
            | Fault::OneAtATime => unreachable!("answered above"),
            Fault::Unavailable => b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
                content-length: 81\r\n\r\n\
                {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"param\":null,\"code\":null}}",
        };
        if stream.write_all(reply).is_err() {
            return;
        }
    }
}

/// Sends a 200 stream head, then events (or one event's bytes) until the client goes.
fn endless(stream: &mut TcpStream, events: bool) {
    let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
    if stream.write_all(head).is_err() {
        return;
    }
    let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n";
    let filler = [b'x'; 64 * 1024];
    loop {
        let sent = if events {
            std::thread::sleep(Duration::from_millis(1));
            stream.write_all(event)
        } else {
            stream.write_all(&filler)
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Starts a server that answers a chat completion at once, except that every request arriving
/// between 2.5 s and 3.5 s after the first one is held until 3.5 s.
pub fn start_stall_window() -> SocketAddr {
    use std::sync::{Arc, OnceLock};
    // A backlog for hundreds of connections opened at once (std's 128 would drop SYNs, and a
    // dropped SYN is retried only after a second).
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    let loopback: SocketAddr = "127.0.0.1:0".parse().expect("address");
    socket.bind(&loopback.into()).expect("bind loopback");
    socket.listen(2048).expect("listen");
    socket.set_nonblocking(true).expect("nonblocking");
    let listener: TcpListener = socket.into();
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        // On the last core, away from a load generator pinned to the first.
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        if let Some(core) = cores.last().filter(|_| cores.len() >= 2) {
            core_affinity::set_for_current(*core);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let first: Arc<OnceLock<tokio::time::Instant>> = Arc::new(OnceLock::new());
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let first = first.clone();
                tokio::spawn(async move {
                    // Raw HTTP/1.1, no framework: releasing hundreds of held answers at once
                    // must cost as little as possible.
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut stream = stream;
                    let mut buf = Vec::with_capacity(4096);
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Some(len) = request_len(&buf) else {
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                            continue;
                        };
                        buf.drain(..len);
                        let now = tokio::time::Instant::now();
                        let start = *first.get_or_init(|| now);
                        let (from, to) = (Duration::from_millis(2500), Duration::from_millis(3500));
                        if now >= start + from && now < start + to {
                            tokio::time::sleep_until(start + to).await;
                        }
                        if stream.write_all(COMPLETION).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
    });
    addr
}

const COMPLETION: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 52\r\n\r\n\
{\"object\":\"chat.completion\",\"choices\":[{\"index\":0}]}";

/// Length of the first complete request (head and content-length body) in `buf`, if any.
fn request_len(buf: &[u8]) -> Option<usize> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    (buf.len() >= end + 4 + length).then_some(end + 4 + length)
}

/// Reads one request (head and content-length body). False when the client closed.
fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    let mut chunk = [0u8; 4096];
    loop {
        if request_len(buf).is_some() {
            return true;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
