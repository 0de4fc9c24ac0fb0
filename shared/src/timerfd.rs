//! A Linux `timerfd` on `CLOCK_MONOTONIC`, armed at absolute deadlines: the kernel timer both
//! binaries wait on when a millisecond tick is too coarse (loadgen's pacer, the mock's answers
//! and stream events). The clock it is armed on is [`crate::clock::monotonic_ns`]'s, so a
//! deadline computed from that clock fires when that clock reaches it, with no second clock to
//! drift against.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// A non-blocking, close-on-exec `timerfd` on `CLOCK_MONOTONIC`.
#[derive(Debug)]
pub struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    /// A new, disarmed timer.
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: timerfd_create takes plain integers and returns a new descriptor or -1.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(TimerFd { fd })
    }

    /// Arms the timer to expire once when `CLOCK_MONOTONIC` reaches `deadline_ns` (at once if it
    /// has), replacing any earlier setting and discarding an expiry not yet taken (the
    /// descriptor is no longer readable). A deadline of 0 would disarm, so it is taken as 1 ns.
    pub fn arm_at(&self, deadline_ns: u64) -> io::Result<()> {
        self.set(deadline_ns.max(1))
    }

    /// Disarms the timer, discarding an expiry not yet taken.
    pub fn disarm(&self) -> io::Result<()> {
        self.set(0)
    }

    fn set(&self, deadline_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: the descriptor is our timerfd; spec lives for the call; the old value is not
        // asked for.
        let armed = unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if armed != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes an expiry: `Ok(true)` when the timer had expired since the last call,
    /// `Ok(false)` when it had not (the read would block).
    pub fn take_expiry(&self) -> io::Result<bool> {
        let mut expirations = [0u8; 8];
        // SAFETY: reading 8 bytes into a buffer of 8 bytes from our own descriptor.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
        if n == 8 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock => Ok(false),
            _ => Err(err),
        }
    }

    /// Blocks this thread until `CLOCK_MONOTONIC` `deadline_ns`, on the kernel's wake-up alone
    /// (no spin); returns how late it woke, ns: the machine's timer floor, one sample.
    pub fn sleep_blocking(&self, deadline_ns: u64) -> io::Result<u64> {
        self.arm_at(deadline_ns)?;
        loop {
            let mut fds = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, for the length given. A signal ends the poll early;
            // the expiry below says whether the timer fired.
            unsafe { libc::poll(&mut fds, 1, -1) };
            let now = crate::clock::monotonic_ns();
            if self.take_expiry()? {
                return Ok(now.saturating_sub(deadline_ns));
            }
        }
    }
}

impl AsRawFd for TimerFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for TimerFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Lowers the calling thread's timer slack to 1 ns, so the kernel does not defer its sleeps
/// and poll time-outs by the default 50 µs to batch wake-ups.
pub fn lower_timer_slack() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer and affects this thread only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_ns;

    /// Blocks until the descriptor is readable (a test has no event loop).
    fn wait_readable(timer: &TimerFd) {
        let mut fds = libc::pollfd {
            fd: timer.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, for the length given.
        let n = unsafe { libc::poll(&mut fds, 1, 5_000) };
        assert_eq!(n, 1, "timer did not fire within 5 s");
    }

    #[test]
    fn fires_at_the_absolute_deadline_never_before() {
        lower_timer_slack();
        let timer = TimerFd::new().unwrap();
        assert!(!timer.take_expiry().unwrap(), "a new timer has not expired");
        let deadline = monotonic_ns() + 2_000_000;
        timer.arm_at(deadline).unwrap();
        wait_readable(&timer);
        let now = monotonic_ns();
        assert!(now >= deadline, "fired {} ns early", deadline - now);
        assert!(timer.take_expiry().unwrap());
        assert!(!timer.take_expiry().unwrap(), "one expiry is consumed once");
    }

    #[test]
    fn a_past_deadline_fires_at_once_and_disarm_cancels() {
        let timer = TimerFd::new().unwrap();
        timer.arm_at(1).unwrap();
        wait_readable(&timer);
        assert!(timer.take_expiry().unwrap());
        // Re-arming discards an expiry that was not taken.
        timer.arm_at(1).unwrap();
        wait_readable(&timer);
        timer.arm_at(monotonic_ns() + 1_000_000_000).unwrap();
        assert!(
            !timer.take_expiry().unwrap(),
            "re-arming discards the pending expiry"
        );
        timer.arm_at(monotonic_ns() + 1_000_000).unwrap();
        timer.disarm().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
        assert!(
            !timer.take_expiry().unwrap(),
            "a disarmed timer never expires"
        );
    }
}
