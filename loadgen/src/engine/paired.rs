//! Paired calls, the measurement under `overhead`'s rounds and `selftest`'s verdicts: one kept-
//! alive HTTP/1.1 connection to each target, and one call at a time, timed from its send, with
//! the mock's own stamps splitting it into its request and response legs when they come back.

use std::rc::Rc;
use std::time::Duration;

use crate::model::target::Target;
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http1::exchange;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::RequestTemplate;
use crate::wire::outcome::{ErrorKind, Kept};
use crate::wire::target::RequestSpec;

/// One successful call, timed from its send, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Call {
    pub e2e_us: f64,
    /// First output-bearing event (streams).
    pub ttft_us: Option<f64>,
    /// Send to the mock's receipt, and the mock's answer to the end of the response
    /// (`--attribute`, when the mock's timestamps came back).
    pub request_leg_us: Option<f64>,
    pub response_leg_us: Option<f64>,
}

/// How a call is timed: its timeout, and whether the runtime spins while it waits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub timeout: Duration,
    pub spin: bool,
}

/// One connection to each target, opened before the first round.
pub(crate) async fn open_pools(targets: &[Target], timeout: Duration) -> Vec<Rc<Http1Pool>> {
    let pools: Vec<Rc<Http1Pool>> = targets
        .iter()
        .map(|target| {
            // Paired rounds speak HTTP/1.1; an https:// target is checked against the
            // system's trusted certificates.
            let transport = crate::wire::transport::Transport::default();
            Rc::new(Http1Pool::new(target.clone(), transport, 1, timeout))
        })
        .collect();
    for pool in &pools {
        // A target that cannot be reached fails its calls, counted by the rounds.
        let _ = pool.preopen(1).await;
    }
    pools
}

/// One call of round `seq` to one target, timed from its send; with `keep_answer`, the kept
/// answer too (a session's turn resends it).
pub(crate) async fn call(
    how: Timing,
    pool: &Http1Pool,
    template: &RequestTemplate,
    request: &RequestSpec,
    clock: &RunClock,
    seq: u64,
    keep_answer: bool,
) -> Result<(Call, Option<Box<Kept>>), ErrorKind> {
    let sent_mono = gatebench_shared::clock::monotonic_ns();
    let now = clock.now_ns();
    let slot = Slot {
        index: seq,
        due_ns: now,
        dispatched_ns: now,
        keep_answer,
        lane: None,
    };
    let mut x = tokio::time::timeout(
        how.timeout,
        spinning(how.spin, exchange(pool, template, request, clock, slot)),
    )
    .await
    .unwrap_or(Err(ErrorKind::Timeout))?;
    // The end on the monotonic clock: the send plus the measured e2e (a few microseconds of
    // loadgen's run clock: its rate error does not matter).
    let e2e_ns = x.done_ns.saturating_sub(x.sent_ns);
    let legs = x.mock_times.map(|t| {
        let request = t.received_ns as f64 - sent_mono as f64;
        let response = (sent_mono + e2e_ns) as f64 - t.started_ns as f64;
        (request / 1e3, response / 1e3)
    });
    let answer = x.kept.take();
    let call = Call {
        e2e_us: e2e_ns as f64 / 1e3,
        ttft_us: x
            .first_output_ns
            .map(|t| t.saturating_sub(x.sent_ns) as f64 / 1e3),
        request_leg_us: legs.map(|l| l.0),
        response_leg_us: legs.map(|l| l.1),
    };
    Ok((call, answer))
}

/// Runs `work`; with `spin`, keeps the runtime busy meanwhile, so it polls its sockets without
/// ever sleeping and sees the response the moment it arrives.
async fn spinning<T>(spin: bool, work: impl std::future::Future<Output = T>) -> T {
    if !spin {
        return work.await;
    }
    let spinner = async {
        loop {
            tokio::task::yield_now().await;
        }
    };
    tokio::select! {
        biased;
        out = work => out,
        never = spinner => never,
    }
}
