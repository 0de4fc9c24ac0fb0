//! A paced, open-loop load that keeps every request: each one's mark (its sequence number),
//! when it was due, sent and done on `CLOCK_MONOTONIC`, and how it ended. A run's histograms
//! say how fast a target answered; a measurement of behaviour (failover, retries, caches)
//! joins each request with what the upstreams recorded of it, so it needs the requests one by
//! one. Rates here are modest (hundreds a second), so the log may allocate.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use gatebench_shared::wake::{Spin, WakeMargin};

use crate::engine::run::stop_requested;
use crate::generator::pacer::Pacer;
use crate::model::target::Target;
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http1::exchange;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::RequestTemplate;
use crate::wire::outcome::ErrorKind;
use crate::wire::target::RequestSpec;
use crate::wire::transport::Transport;

/// What to send: request `k` (from 0) is `templates[pick(k)]`, marked `first_seq + k`, due at
/// `k / rate` seconds after the start.
pub struct Load<'a> {
    pub target: &'a Target,
    pub transport: &'a Transport,
    pub spec: &'a RequestSpec,
    pub templates: &'a [RequestTemplate],
    pub pick: &'a dyn Fn(u64) -> usize,
    pub rate: f64,
    pub count: u64,
    pub first_seq: u64,
    pub timeout: Duration,
    pub connections: usize,
}

/// One request as the client saw it; instants are `CLOCK_MONOTONIC` ns.
#[derive(Debug, Clone)]
pub struct Sent {
    pub seq: u64,
    /// Which template it was.
    pub template: usize,
    pub due_ns: u64,
    /// How late it was sent after it was due (the generator's lag; ns).
    pub lag_ns: u64,
    pub done_ns: u64,
    /// How it failed; `None` for an answer of 200 that passed the checks.
    pub error: Option<ErrorKind>,
}

impl Sent {
    /// From its intended send to its end (coordinated omission corrected), in ms.
    pub fn latency_ms(&self) -> f64 {
        self.done_ns.saturating_sub(self.due_ns) as f64 / 1e6
    }
}

/// The load as it went, and the instant it started (`CLOCK_MONOTONIC` ns).
pub struct Driven {
    pub sent: Vec<Sent>,
    pub start_ns: u64,
}

/// Sends `load` and waits for every answer (each bounded by the timeout); stops sending on
/// Ctrl-C.
pub fn drive(load: &Load<'_>) -> Result<Driven, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let clock = RunClock::starting_in(Duration::from_millis(20));
        let start_ns = clock.start_mono_ns;
        let pacer = Pacer::new(clock.clone(), WakeMargin::new(Spin::Auto))
            .map_err(|e| format!("cannot pace: {e}"))?;
        let pool = Rc::new(Http1Pool::new(
            load.target.clone(),
            load.transport.clone(),
            load.connections,
            load.timeout,
        ));
        let templates: Rc<Vec<RequestTemplate>> = Rc::new(load.templates.to_vec());
        let spec = Rc::new(load.spec.clone());
        let log = Rc::new(RefCell::new(Vec::with_capacity(load.count as usize)));
        let gap_ns = 1e9 / load.rate.max(1e-9);
        let mut tasks = Vec::with_capacity(load.count as usize);
        for k in 0..load.count {
            let due = (k as f64 * gap_ns) as u64;
            pacer
                .wait_until(due)
                .await
                .map_err(|e| format!("cannot pace: {e}"))?;
            if stop_requested() {
                break;
            }
            let template = (load.pick)(k) % templates.len().max(1);
            let (pool, templates, spec, clock, log) = (
                pool.clone(),
                templates.clone(),
                spec.clone(),
                clock.clone(),
                log.clone(),
            );
            let (seq, timeout) = (load.first_seq + k, load.timeout);
            tasks.push(tokio::task::spawn_local(async move {
                let dispatched = clock.now_ns();
                let slot = Slot {
                    index: seq,
                    due_ns: due,
                    dispatched_ns: dispatched,
                    keep_answer: false,
                    lane: None,
                };
                let x = tokio::time::timeout(
                    timeout,
                    exchange(&pool, &templates[template], &spec, &clock, slot),
                )
                .await
                .unwrap_or(Err(ErrorKind::Timeout));
                let (done, sent, error) = match x {
                    Ok(x) => (x.done_ns, x.sent_ns, None),
                    Err(kind) => (clock.now_ns(), dispatched, Some(kind)),
                };
                log.borrow_mut().push(Sent {
                    seq,
                    template,
                    due_ns: start_ns + due,
                    lag_ns: sent.saturating_sub(due),
                    done_ns: start_ns + done,
                    error,
                });
            }));
        }
        for task in tasks {
            let _ = task.await;
        }
        let mut sent = std::mem::take(&mut *log.borrow_mut());
        sent.sort_by_key(|s| s.seq);
        Ok(Driven { sent, start_ns })
    })
}
