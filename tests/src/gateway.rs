//! "Gateways" built for the tests: TCP forwarders in front of an upstream with a known
//! behaviour: a delay added to every request, a cap on connections past which they refuse, or
//! streams buffered until their end. Two forwarders with the same delay cost the same, so the
//! difference between them is the difference of their delays: a known overhead.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a test gateway behaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct GatewayOptions {
    /// Held before each chunk the client sends is passed on.
    pub delay: Duration,
    /// Connections past this many open at once are closed at once.
    pub max_connections: Option<usize>,
    /// Responses are held until the stream's `data: [DONE]`, then sent in one write.
    pub buffer_streams: bool,
}

/// Starts a forwarder on `127.0.0.1:0` to `upstream` adding `delay` to every request.
pub fn start_delay_gateway(upstream: SocketAddr, delay: Duration) -> SocketAddr {
    start_gateway(
        upstream,
        GatewayOptions {
            delay,
            ..GatewayOptions::default()
        },
    )
}

/// Starts a forwarder on `127.0.0.1:0` to `upstream`; it lives until the test process ends.
pub fn start_gateway(upstream: SocketAddr, options: GatewayOptions) -> SocketAddr {
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
            std::thread::spawn(move || forward(client_rx, server, options.delay));
            std::thread::spawn(move || {
                if options.buffer_streams {
                    forward_buffered(server_rx, client);
                } else {
                    forward(server_rx, client, Duration::ZERO);
                }
                still_open.fetch_sub(1, SeqCst);
            });
        }
    });
    addr
}

/// Copies `from` to `to`, holding each chunk read for `delay` (measured from the read).
fn forward(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        hold(Instant::now() + delay);
        if to.write_all(&buf[..n]).is_err() {
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
