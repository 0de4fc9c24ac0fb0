//! Starting several loadgen processes together (`--start-at`), and what this host's clock says of
//! its own accuracy. Nothing coordinates the shards: each trusts its clock (kept by NTP or the
//! like), and records what the kernel reports of that clock so the merge can judge it.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, SystemTime};

use crate::results::clock::KernelClock;

/// How long before the start instant the workers begin opening their connections.
pub const PREPARE: Duration = Duration::from_secs(2);

/// Furthest ahead a start may be.
pub const MAX_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// Parses an RFC 3339 instant in UTC, like `2026-11-30T08:00:00Z` or with fractional seconds.
pub fn parse(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(text.trim()).ok()
}

/// `t` in RFC 3339 with microseconds, UTC.
pub fn format(t: SystemTime) -> String {
    humantime::format_rfc3339_micros(t).to_string()
}

/// Microseconds since the Unix epoch.
pub fn unix_us(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

/// Sleeps until `lead` before `at` (at once if that has passed), in short steps so a stop
/// request ends the wait. Returns false when stopped.
pub fn sleep_until_before(at: SystemTime, lead: Duration, stop: &AtomicBool) -> bool {
    let wake = at.checked_sub(lead).unwrap_or(at);
    loop {
        if stop.load(Relaxed) {
            return false;
        }
        match wake.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(Duration::from_millis(100))),
            _ => return true,
        }
    }
}

/// Reads the kernel's clock discipline state, or `None` where it cannot be read.
pub fn kernel_clock() -> Option<KernelClock> {
    // SAFETY: an all-zero timex (modes 0: read only) is a valid argument to adjtimex.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: adjtimex reads and writes the struct we pass, which lives for the call.
    let state = unsafe { libc::adjtimex(&mut timex) };
    if state < 0 {
        return None;
    }
    let nanos = timex.status & libc::STA_NANO != 0;
    Some(KernelClock {
        synchronized: state != libc::TIME_ERROR && timex.status & libc::STA_UNSYNC == 0,
        offset_us: if nanos {
            timex.offset as f64 / 1_000.0
        } else {
            timex.offset as f64
        },
        est_error_us: timex.esterror as i64,
        max_error_us: timex.maxerror as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_parse_in_utc_with_or_without_fractions() {
        let t = parse("2026-11-30T08:00:00Z").unwrap();
        assert_eq!(unix_us(t), 1_796_025_600_000_000);
        let t = parse("2026-11-30T08:00:00.250Z").unwrap();
        assert_eq!(unix_us(t), 1_796_025_600_250_000);
        assert_eq!(format(t), "2026-11-30T08:00:00.250000Z");
        for bad in ["tomorrow", "2026-11-30", "08:00:00", ""] {
            assert!(parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_kernel_clock_reads() {
        let k = kernel_clock().expect("adjtimex reads on Linux");
        assert!(k.max_error_us >= 0 && k.est_error_us >= 0, "{k:?}");
    }

    #[test]
    fn waits_end_on_a_stop() {
        let stop = AtomicBool::new(true);
        let far = SystemTime::now() + Duration::from_secs(3600);
        assert!(!sleep_until_before(far, PREPARE, &stop));
        let stop = AtomicBool::new(false);
        let past = SystemTime::now() - Duration::from_secs(1);
        assert!(sleep_until_before(past, PREPARE, &stop));
    }
}
