//! The workers' timers as one account: their margins and wake-ups merged, for `/metrics` and the
//! shutdown summary.
//!
//! Each worker's timer registers here when it is installed; reading the account locks each
//! worker's queue once, briefly, to copy its margin (a few kilobytes), so the hot path never
//! waits on a reader for longer than a copy.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::wake::{WakeMargin, WakeReport};

use super::driver::Shared;
use crate::config::MAX_SPIN;

/// The timers of one server's workers.
#[derive(Debug, Default)]
pub struct Timers {
    list: Mutex<Vec<Arc<Shared>>>,
}

impl Timers {
    pub(super) fn register(&self, timer: Arc<Shared>) {
        self.list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(timer);
    }

    /// Every worker's margin and wake-ups merged: the widest margins, the tallies and counts
    /// added. `None` before any worker installed its timer.
    pub fn report(&self) -> Option<WakeReport> {
        let now = monotonic_ns();
        let margins: Vec<WakeMargin> = self
            .list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|timer| timer.queue().margin_at(now))
            .collect();
        let refs: Vec<&WakeMargin> = margins.iter().collect();
        let mut report = WakeReport::merged(&refs)?;
        // The margins as used: a learned one wider than the cap spins the cap.
        let cap_us = MAX_SPIN.as_secs_f64() * 1e6;
        report.margin_us = report.margin_us.min(cap_us);
        report.widest_margin_us = report.widest_margin_us.min(cap_us);
        Some(report)
    }

    /// The timer's series in Prometheus text: the spin setting, the margin (now and widest),
    /// the lateness of kernel wake-ups (a summary in seconds), wake-ups, late wake-ups and the
    /// time spun.
    pub fn to_prometheus(&self, out: &mut String) {
        let Some(r) = self.report() else {
            return;
        };
        let _ = writeln!(
            out,
            "# HELP mock_timer_spin_info The --spin setting of the precise timer.\n\
             # TYPE mock_timer_spin_info gauge\nmock_timer_spin_info{{spin=\"{}\"}} 1",
            r.spin
        );
        let _ = writeln!(
            out,
            "# HELP mock_timer_wakeup_lateness_seconds How late the kernel woke the timer after \
             the instant it was armed for (the calibration at start included).\n\
             # TYPE mock_timer_wakeup_lateness_seconds summary\n\
             mock_timer_wakeup_lateness_seconds{{quantile=\"0.5\"}} {}\n\
             mock_timer_wakeup_lateness_seconds{{quantile=\"0.99\"}} {}\n\
             mock_timer_wakeup_lateness_seconds{{quantile=\"1\"}} {}\n\
             mock_timer_wakeup_lateness_seconds_count {}",
            r.lateness_p50_us / 1e6,
            r.lateness_p99_us / 1e6,
            r.lateness_max_us / 1e6,
            r.wakeups
        );
        for (name, kind, help, value) in series(&r) {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
    }
}

/// The timer's series of one value each: name, type, help, value.
fn series(r: &WakeReport) -> [(&'static str, &'static str, &'static str, f64); 5] {
    [
        (
            "mock_timer_margin_seconds",
            "gauge",
            "How long before a deadline the timer wakes and spins the rest (the widest worker's).",
            r.margin_us / 1e6,
        ),
        (
            "mock_timer_margin_widest_seconds",
            "gauge",
            "The widest margin used since start.",
            r.widest_margin_us / 1e6,
        ),
        (
            "mock_timer_wakeups_total",
            "counter",
            "Kernel wake-ups of the timer (the calibration at start included).",
            r.wakeups as f64,
        ),
        (
            "mock_timer_late_wakeups_total",
            "counter",
            "Wake-ups later than the margin: the waits that ended late.",
            r.late_wakeups as f64,
        ),
        (
            "mock_timer_spun_seconds_total",
            "counter",
            "Time the workers spun (yielding to their other work) before deadlines, in seconds of one core.",
            r.spun_s,
        ),
    ]
}

/// The timer's facts in one phrase, for the shutdown summary.
pub fn summary(r: &WakeReport) -> String {
    format!(
        "timer spin {}: margin {:.0}us (widest {:.0}us), {} wake-ups p50 {:.0}us p99 {:.0}us \
         late, {} later than the margin, spun {:.3}s",
        r.spin,
        r.margin_us,
        r.widest_margin_us,
        r.wakeups,
        r.lateness_p50_us,
        r.lateness_p99_us,
        r.late_wakeups,
        r.spun_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatebench_shared::wake::Spin;

    #[test]
    fn the_account_names_every_series_once_a_timer_is_installed() {
        let timers = Timers::default();
        let mut empty = String::new();
        timers.to_prometheus(&mut empty);
        assert!(empty.is_empty(), "{empty}");
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                super::super::install(Spin::Auto, Some(&timers)).unwrap();
                // Far beyond the widest margin, so the timer sleeps and wakes.
                let due = monotonic_ns() + 20_000_000;
                assert!(super::super::sleep_until(due).await >= due);
            });
        let mut text = String::new();
        timers.to_prometheus(&mut text);
        for series in [
            "mock_timer_spin_info{spin=\"auto\"} 1",
            "mock_timer_margin_seconds ",
            "mock_timer_margin_widest_seconds ",
            "mock_timer_wakeup_lateness_seconds{quantile=\"0.5\"} ",
            "mock_timer_wakeup_lateness_seconds{quantile=\"0.99\"} ",
            "mock_timer_wakeup_lateness_seconds_count ",
            "mock_timer_wakeups_total ",
            "mock_timer_late_wakeups_total ",
            "mock_timer_spun_seconds_total ",
        ] {
            assert!(text.contains(series), "{series} missing from:\n{text}");
        }
        let r = timers.report().unwrap();
        assert!(r.wakeups > 40, "the calibration and one wake-up: {r:?}");
        // Learned from this host's wake-ups, so no wider than the widest there is.
        let widest_us = gatebench_shared::wake::MAX_MARGIN_NS as f64 / 1e3;
        assert!(
            r.margin_us <= widest_us && r.widest_margin_us <= widest_us,
            "{r:?}"
        );
        let line = summary(&r);
        assert!(line.starts_with("timer spin auto: margin "), "{line}");
    }
}
