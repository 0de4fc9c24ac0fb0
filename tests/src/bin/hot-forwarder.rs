//! A forwarder with a deliberately hot function, run as a process of its own so that a
//! profiler can be pointed at it: `hot-forwarder UPSTREAM_ADDR HOT_US` forwards
//! 127.0.0.1:PORT (printed on the first line) to the upstream, burning HOT_US of CPU in
//! `deliberately_hot_checksum` on every request, until it is killed.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use gatebench_tests::gateway::{start_gateway, GatewayOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(upstream), Some(hot)) = (
        args.get(1).and_then(|a| a.parse::<SocketAddr>().ok()),
        args.get(2).and_then(|a| a.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: hot-forwarder UPSTREAM_ADDR HOT_US");
        std::process::exit(2);
    };
    let addr = start_gateway(
        upstream,
        GatewayOptions {
            hot: Duration::from_micros(hot),
            ..GatewayOptions::default()
        },
    );
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{addr}");
    let _ = out.flush();
    loop {
        std::thread::park();
    }
}
