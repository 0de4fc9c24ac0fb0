//! The machine's own timer floor: how late the kernel wakes a thread blocked on a `timerfd`
//! armed at an absolute `CLOCK_MONOTONIC` deadline, with nothing else in the way. The mock's
//! emission error cannot be below this; read the two side by side.
//!
//! Run: cargo run --release -p gatebench-shared --example timer_floor -- [WAKES]
//! Prints, for deadlines 200 µs, 1 ms and 3 ms ahead, the lateness p50 / p99 / p99.9 / max in
//! µs. WAKES (default 2000) per distance: 0.4 s, 2 s and 6 s.

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::timerfd::{lower_timer_slack, TimerFd};

fn main() {
    let wakes: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 2_000,
        Some(Ok(n)) if n >= 1_000 => n,
        Some(_) => {
            eprintln!("timer_floor: WAKES must be a whole number of at least 1000");
            std::process::exit(2);
        }
    };
    lower_timer_slack();
    let timer = match TimerFd::new() {
        Ok(timer) => timer,
        Err(err) => {
            eprintln!("timer_floor: cannot create a timerfd: {err}");
            std::process::exit(2);
        }
    };
    for ahead_us in [200u64, 1_000, 3_000] {
        let mut late_ns = Vec::with_capacity(wakes);
        for _ in 0..wakes {
            match timer.sleep_blocking(monotonic_ns() + ahead_us * 1_000) {
                Ok(late) => late_ns.push(late),
                Err(err) => {
                    eprintln!("timer_floor: cannot arm the timer: {err}");
                    std::process::exit(1);
                }
            }
        }
        late_ns.sort_unstable();
        let at = |q: f64| late_ns[((late_ns.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
        println!(
            "timerfd {ahead_us:>4} µs ahead, {wakes} wakes: lateness p50 {:.1} µs, p99 {:.1} µs, \
             p99.9 {:.1} µs, max {:.1} µs",
            at(0.5),
            at(0.99),
            at(0.999),
            at(1.0)
        );
    }
}
