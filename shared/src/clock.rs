//! The clock both binaries read when they must agree on instants: `CLOCK_MONOTONIC`, shared
//! by every process on one host. The mock stamps when it received a request and when it
//! started the answer; loadgen, on the same host, places those stamps between its own send and
//! receipt to split a gateway's overhead into the request leg and the response leg.

/// Request header asking the mock for its timestamps.
pub const TIMESTAMPS_HEADER: &str = "x-mock-timestamps";
/// Response header: `CLOCK_MONOTONIC` ns when the mock began handling the request (its head
/// parsed).
pub const RECEIVED_HEADER: &str = "x-mock-received-ns";
/// Response header: `CLOCK_MONOTONIC` ns when the mock handed the response head to be sent.
pub const STARTED_HEADER: &str = "x-mock-started-ns";

/// Nanoseconds of `CLOCK_MONOTONIC` (a vDSO call, tens of nanoseconds).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_in_nanoseconds() {
        let a = monotonic_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = monotonic_ns();
        assert!(b - a >= 2_000_000, "{a} {b}");
        assert!(b - a < 2_000_000_000, "{a} {b}");
    }
}
