//! A "gateway" built for the tests: a TCP forwarder in front of an upstream that holds every
//! chunk the client sends for a known delay before passing it on. Two of them with the same
//! delay cost the same, so the difference between them is the difference of their delays: a
//! known overhead to check `loadgen overhead` against.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Starts a forwarder on `127.0.0.1:0` to `upstream` adding `delay` to every request; it lives
/// until the test process ends.
pub fn start_delay_gateway(upstream: SocketAddr, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(upstream) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (Ok(client_rx), Ok(server_rx)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            std::thread::spawn(move || forward(client_rx, server, delay));
            std::thread::spawn(move || forward(server_rx, client, Duration::ZERO));
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
