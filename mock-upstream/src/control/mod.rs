//! `--control ADDR`: steering a running mock. A POST to the control listener replaces the
//! configured faults, latency or time to first token for a while, or closes the main listener
//! (`refuse`); the state ends when its time is up, at a reset, or at the next POST.
//!
//! The hot path reads one atomic while nothing is steered; only a steered state in force is
//! read under a lock (a read lock, and an `Arc` clone).
//!
//! - `steer`: the POST body as plain data, and what is wrong with a bad one.
//!
//! The listener that serves it is `crate::serving::control_listener`; this module imports no part of
//! the server, as the state that holds it does not.

mod steer;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use gatebench_shared::clock::monotonic_ns;
use serde::Serialize;
use tokio::sync::watch;

use crate::config::FaultRates;

pub use steer::Steer;

/// The steered state of one mock.
#[derive(Debug)]
pub struct Control {
    /// True while a steered state is in force: the one read every request makes.
    active: AtomicBool,
    /// True while the state in force refuses: open connections are dropped at their next
    /// request.
    refusing: AtomicBool,
    /// The state in force (read only while `active`).
    in_force: RwLock<Option<Arc<Steer>>>,
    /// The state last posted, with its times (the control listener's only).
    posted: Mutex<Posted>,
    /// POSTs and resets accepted.
    changes: AtomicU64,
    /// True while the main listener should accept (each worker watches it).
    listening: watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct Posted {
    steer: Option<Arc<Steer>>,
    since_ns: u64,
    until_ns: Option<u64>,
    /// Bumped by every POST and reset, so a timer of an earlier state does nothing.
    generation: u64,
    timer: Option<tokio::task::AbortHandle>,
}

/// `GET /v1/gatebench/control` (docs/mock-faults.md).
#[derive(Debug, Serialize)]
struct Status {
    steered: bool,
    faults: Vec<String>,
    latency: Option<String>,
    ttft: Option<String>,
    refuse: bool,
    in_force: bool,
    since_ns: Option<u64>,
    until_ns: Option<u64>,
    changes: u64,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            active: AtomicBool::new(false),
            refusing: AtomicBool::new(false),
            in_force: RwLock::new(None),
            posted: Mutex::new(Posted::default()),
            changes: AtomicU64::new(0),
            listening: watch::Sender::new(true),
        }
    }
}

impl Control {
    /// True while a steered state is in force.
    #[inline]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// The steered state in force, if any: one atomic load when there is none.
    #[inline]
    pub fn in_force(&self) -> Option<Arc<Steer>> {
        if !self.active() {
            return None;
        }
        self.read_in_force()
    }

    #[cold]
    fn read_in_force(&self) -> Option<Arc<Steer>> {
        self.in_force
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// True while connections to the main listener are to be dropped at their next request.
    #[inline]
    pub fn refusing(&self) -> bool {
        self.refusing.load(Ordering::Relaxed)
    }

    /// Turns false while the main listener is to be closed.
    pub fn listening(&self) -> watch::Receiver<bool> {
        self.listening.subscribe()
    }

    /// Replaces the whole steered state with `steer`: in force at once when it has no
    /// `after_ms`, else from then; ended after its `for_ms`. Call on a Tokio runtime (the
    /// control listener's): its timer runs there.
    pub fn post(control: &Arc<Control>, steer: Steer) {
        let steer = Arc::new(steer);
        let now = monotonic_ns();
        let since_ns = now.saturating_add(nanos(steer.after));
        let until_ns = steer.lasts.map(|d| since_ns.saturating_add(nanos(d)));
        let mut posted = control.posted.lock().unwrap_or_else(|e| e.into_inner());
        let generation = control.replace(&mut posted);
        posted.steer = Some(steer.clone());
        posted.since_ns = since_ns;
        posted.until_ns = until_ns;
        // A state posted for later leaves the start-up configuration in force until then.
        control.activate(steer.after.is_zero().then(|| steer.clone()));
        if !steer.after.is_zero() || until_ns.is_some() {
            let control = control.clone();
            let task = tokio::spawn(async move {
                if !steer.after.is_zero() {
                    sleep_until_ns(since_ns).await;
                    control.at(generation, |_| Some(steer.clone()));
                }
                if let Some(until_ns) = until_ns {
                    sleep_until_ns(until_ns).await;
                    control.at(generation, |posted| {
                        posted.steer = None;
                        None
                    });
                }
            });
            posted.timer = Some(task.abort_handle());
        }
    }

    /// Back to the start-up configuration at once.
    pub fn reset(&self) {
        let mut posted = self.posted.lock().unwrap_or_else(|e| e.into_inner());
        self.replace(&mut posted);
        posted.steer = None;
        self.activate(None);
    }

    /// Ends the previous state's timer and counts a change; the new generation.
    fn replace(&self, posted: &mut Posted) -> u64 {
        if let Some(timer) = posted.timer.take() {
            timer.abort();
        }
        posted.generation += 1;
        self.changes.fetch_add(1, Ordering::Relaxed);
        posted.generation
    }

    /// Puts what `change` gives in force, unless a later POST or reset came first.
    fn at(&self, generation: u64, change: impl FnOnce(&mut Posted) -> Option<Arc<Steer>>) {
        let mut posted = self.posted.lock().unwrap_or_else(|e| e.into_inner());
        if posted.generation == generation {
            let steer = change(&mut posted);
            self.activate(steer);
        }
    }

    /// Puts `steer` in force (`None`: the start-up configuration), opening or closing the main
    /// listener as it says.
    fn activate(&self, steer: Option<Arc<Steer>>) {
        let refuse = steer.as_ref().is_some_and(|s| s.refuse);
        let on = steer.is_some();
        *self.in_force.write().unwrap_or_else(|e| e.into_inner()) = steer;
        self.refusing.store(refuse, Ordering::Relaxed);
        self.active.store(on, Ordering::Release);
        self.listening.send_if_modified(|listening| {
            let changed = *listening == refuse;
            *listening = !refuse;
            changed
        });
    }

    /// The steered state as JSON: `GET /v1/gatebench/control` and the POSTs' answers.
    pub fn status_json(&self) -> Vec<u8> {
        let posted = self.posted.lock().unwrap_or_else(|e| e.into_inner());
        let steer = posted.steer.as_deref();
        let status = Status {
            steered: steer.is_some(),
            faults: steer
                .and_then(|s| s.faults.as_ref())
                .map(FaultRates::to_settings)
                .unwrap_or_default(),
            latency: steer
                .and_then(|s| s.latency.response)
                .map(|d| d.to_string()),
            ttft: steer.and_then(|s| s.latency.ttft).map(|d| d.to_string()),
            refuse: steer.is_some_and(|s| s.refuse),
            in_force: self.active(),
            since_ns: steer.map(|_| posted.since_ns),
            until_ns: steer.and(posted.until_ns),
            changes: self.changes.load(Ordering::Relaxed),
        };
        // Invariant: a struct of numbers, strings and booleans always serialises.
        serde_json::to_vec(&status).expect("control status serialises")
    }

    /// `mock_control_changes_total`, in Prometheus text.
    pub fn to_prometheus(&self, out: &mut String) {
        out.push_str(
            "# HELP mock_control_changes_total Steered states posted or reset on the control listener.\n",
        );
        out.push_str("# TYPE mock_control_changes_total counter\n");
        let _ = writeln!(
            out,
            "mock_control_changes_total {}",
            self.changes.load(Ordering::Relaxed)
        );
    }
}

/// The error a main-listener request gets while the mock is steered to refuse: hyper drops
/// the connection (HTTP/2: the stream) without an answer.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped on purpose: the mock is steered to refuse")]
pub struct Refused;

fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Sleeps until `CLOCK_MONOTONIC` reads `deadline_ns` (tokio's timer: a millisecond's grain).
async fn sleep_until_ns(deadline_ns: u64) {
    let wait = deadline_ns.saturating_sub(monotonic_ns());
    tokio::time::sleep(std::time::Duration::from_nanos(wait)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_in_force_until_posted_and_a_reset_ends_it() {
        let control = Control::default();
        assert!(control.in_force().is_none());
        let steer = Steer::parse(br#"{"faults":["503:100%"],"refuse":true}"#).unwrap();
        control.activate(Some(Arc::new(steer)));
        assert!(control.in_force().is_some() && control.refusing());
        assert!(!*control.listening().borrow());
        control.reset();
        assert!(control.in_force().is_none() && !control.refusing());
        assert!(*control.listening().borrow());
        let status: serde_json::Value = serde_json::from_slice(&control.status_json()).unwrap();
        assert_eq!(status["steered"], false);
        assert_eq!(status["changes"], 1);
        assert_eq!(status["faults"], serde_json::json!([]));
    }
}
