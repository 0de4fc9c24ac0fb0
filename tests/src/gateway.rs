//! "Gateways" built for the tests: TCP forwarders in front of an upstream with a known
//! behaviour: a delay added to every request, a cap on connections past which they refuse, or
//! streams buffered until their end. Two forwarders with the same delay cost the same, so the
//! difference between them is the difference of their delays: a known overhead.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a test gateway behaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct GatewayOptions {
    /// Held before each chunk the client sends is passed on.
    pub delay: Duration,
    /// Held before each chunk the upstream answers is passed on.
    pub response_delay: Duration,
    /// Connections past this many open at once are closed at once.
    pub max_connections: Option<usize>,
    /// Responses are held until the stream's `data: [DONE]`, then sent in one write.
    pub buffer_streams: bool,
    /// CPU burnt in [`deliberately_hot_checksum`] on each chunk the client sends: a function
    /// whose name must lead a profile of the forwarder.
    pub hot: Duration,
}

/// Starts a forwarder on `127.0.0.1:0` to `upstream` adding `delay` to every request.
pub fn start_delay_gateway(upstream: SocketAddr, delay: Duration) -> SocketAddr {
    start_delay_gateway_recorded(upstream, delay).0
}

/// [`start_delay_gateway`], also returning how long each request was really held.
pub fn start_delay_gateway_recorded(upstream: SocketAddr, delay: Duration) -> (SocketAddr, Held) {
    start_gateway_recorded(
        upstream,
        GatewayOptions {
            delay,
            ..GatewayOptions::default()
        },
    )
}

/// How long a gateway really held each request: on a loaded machine a sleep overshoots, so a
/// test compares with what was added, not with what was asked.
pub type Held = Arc<Mutex<Vec<Duration>>>;

/// Starts a forwarder on `127.0.0.1:0` to `upstream`; it lives until the test process ends.
pub fn start_gateway(upstream: SocketAddr, options: GatewayOptions) -> SocketAddr {
    start_gateway_recorded(upstream, options).0
}

/// [`start_gateway`], also returning the record of how long each request was held.
pub fn start_gateway_recorded(upstream: SocketAddr, options: GatewayOptions) -> (SocketAddr, Held) {
    let held: Held = Arc::default();
    let record = held.clone();
    // A backlog for a thousand connections opened at once.
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    let loopback: SocketAddr = "127.0.0.1:0".parse().expect("address");
    socket.bind(&loopback.into()).expect("bind loopback");
    socket.listen(2048).expect("listen");
    let listener: TcpListener = socket.into();
    let addr = listener.local_addr().expect("local addr");
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            if options
                .max_connections
                .is_some_and(|cap| open.load(SeqCst) >= cap)
            {
                drop(client);
                continue;
            }
            let Ok(server) = TcpStream::connect(upstream) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (Ok(client_rx), Ok(server_rx)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            open.fetch_add(1, SeqCst);
            let still_open = open.clone();
            let record = record.clone();
            std::thread::spawn(move || {
                forward(client_rx, server, options.delay, options.hot, Some(&record));
            });
            std::thread::spawn(move || {
                if options.buffer_streams {
                    forward_buffered(server_rx, client);
                } else {
                    forward(
                        server_rx,
                        client,
                        options.response_delay,
                        Duration::ZERO,
                        None,
                    );
                }
                still_open.fetch_sub(1, SeqCst);
            });
        }
    });
    (addr, held)
}

/// Copies `from` to `to`, burning `hot` of CPU on each chunk read and holding it for `delay`
/// (measured from the read), and recording how long each was really held.
fn forward(
    mut from: TcpStream,
    mut to: TcpStream,
    delay: Duration,
    hot: Duration,
    held: Option<&Held>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let read_at = Instant::now();
        if !hot.is_zero() {
            std::hint::black_box(deliberately_hot_checksum(&buf[..n], hot));
        }
        hold(read_at + delay);
        let write_result = to.write_all(&buf[..n]);
        if let Some(held) = held {
            if let Ok(mut held) = held.lock() {
                held.push(read_at.elapsed());
            }
        }
        if write_result.is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Copies `from` to `to`, holding bytes back until a stream's end marker (or a non-stream
/// response, which has none: those pass at once).
fn forward_buffered(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut held = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        held.extend_from_slice(&buf[..n]);
        let streaming = held.windows(17).any(|w| w == b"text/event-stream");
        let ended = held.windows(12).any(|w| w == b"data: [DONE]");
        if (!streaming || ended) && to.write_all(&std::mem::take(&mut held)).is_err() {
            break;
        }
    }
    let _ = to.write_all(&held);
    let _ = to.shutdown(Shutdown::Write);
}

/// Waits until `deadline`: sleeps to within half a millisecond of it, then spins, so the delay
/// is exact to a few microseconds rather than to the sleep's slack (and a 2-core machine is not
/// given over to spinning).
fn hold(deadline: Instant) {
    let early = Duration::from_micros(500);
    let left = deadline.saturating_duration_since(Instant::now());
    if left > early {
        std::thread::sleep(left - early);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// Checksums `bytes` over and over for `budget` of CPU: all arithmetic in this one function
/// (the clock is read once every thousand passes), so a profiler's samples land in it by name
/// whether or not the binary keeps frame pointers.
#[inline(never)]
pub fn deliberately_hot_checksum(bytes: &[u8], budget: Duration) -> u64 {
    let start = Instant::now();
    let mut sum = 0xcbf2_9ce4_8422_2325u64;
    loop {
        for _ in 0..1_000 {
            for &b in std::hint::black_box(bytes) {
                sum = (sum ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
        }
        if start.elapsed() >= budget {
            return sum;
        }
    }
}
