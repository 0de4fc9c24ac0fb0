//! What keeping every metric per second (`--hdr-log`) costs a worker: each second it encodes
//! and clears one histogram per logged metric, on the worker's own thread, between two requests.
//! Prints the time of that close (median and worst of 60 seconds) without logging, for the
//! non-streaming metrics (6) and for the streaming ones (12), at 5,000 requests a second.
//!
//! `cargo bench -p loadgen --bench per_second`

use std::time::{Duration, Instant};

use loadgen::generator::intervals::PerSecond;
use loadgen::results::metric::Metric;

fn closes(logged: &[Metric]) -> Vec<Duration> {
    let mut seconds = PerSecond::new(0, logged);
    let mut times = Vec::new();
    let mut x: u64 = 1;
    for second in 0..60u64 {
        for _ in 0..5_000 {
            // A spread of latencies, 50 µs to 20 ms (xorshift).
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for m in logged {
                seconds.record(*m, 50 + x % 20_000);
            }
            seconds.outcome(Some(50 + x % 20_000));
        }
        let start = Instant::now();
        seconds.roll_to((second + 1) * 1_000_000_000);
        times.push(start.elapsed());
    }
    times.sort();
    times
}

fn main() {
    let chat: Vec<Metric> = loadgen::results::metric::reported(false).collect();
    let stream: Vec<Metric> = loadgen::results::metric::reported(true).collect();
    let cases: [(&str, &[Metric]); 3] = [
        ("no log", &[]),
        ("chat, 6 metrics", &chat),
        ("stream, 12 metrics", &stream),
    ];
    for (name, logged) in cases {
        let times = closes(logged);
        println!(
            "{name:<20} close of a second: median {:>8.1} µs, worst {:>8.1} µs",
            times[times.len() / 2].as_secs_f64() * 1e6,
            times[times.len() - 1].as_secs_f64() * 1e6
        );
    }
}
