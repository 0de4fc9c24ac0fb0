//! One trial of paired rounds: every round calls the direct target and each gateway once, one
//! call at a time, in an order shuffled by a seeded generator, all with the same
//! `x-gatebench-seq`, so the mock draws the same latency for every call of a round.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http1::exchange;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::RequestTemplate;
use crate::wire::outcome::ErrorKind;
use crate::wire::target::RequestSpec;

use super::plan::OverheadPlan;

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

/// What one target saw in one trial.
#[derive(Debug, Default)]
pub struct TargetCalls {
    /// One entry per measured round; `None` where the call failed.
    pub calls: Vec<Option<Call>>,
    pub errors: BTreeMap<String, u64>,
    pub connections_opened: u64,
    pub connections_reused: u64,
}

/// Runs trial `trial` of `request` on the current thread; one `TargetCalls` per target, in the
/// plan's order. Stops early (with the rounds done so far) when `stop` is set.
pub fn run_trial(
    plan: &OverheadPlan,
    request: &RequestSpec,
    trial: usize,
    stop: &AtomicBool,
) -> Result<Vec<TargetCalls>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    Ok(local.block_on(&runtime, rounds(plan, request, trial, stop)))
}

async fn rounds(
    plan: &OverheadPlan,
    request: &RequestSpec,
    trial: usize,
    stop: &AtomicBool,
) -> Vec<TargetCalls> {
    let n = plan.targets.len();
    let pools = open_pools(plan).await;
    let templates: Vec<RequestTemplate> = plan
        .targets
        .iter()
        .map(|t| RequestTemplate::post(&t.target, request))
        .collect();
    let clock = RunClock::starting_in(std::time::Duration::ZERO);
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Pcg64Mcg::seed_from_u64(plan.seed ^ (trial as u64).wrapping_mul(0x9E37_79B9));
    let mut out: Vec<TargetCalls> = (0..n).map(|_| TargetCalls::default()).collect();
    let total = plan.warmup_rounds + plan.rounds;
    let progress = std::io::stderr().is_terminal();
    for round in 0..total {
        if stop.load(Relaxed) {
            break;
        }
        let seq = (trial * total + round) as u64;
        order.shuffle(&mut rng);
        let mut results = vec![Err(ErrorKind::Timeout); n];
        for &i in &order {
            results[i] = call(plan, &pools[i], &templates[i], request, &clock, seq, false)
                .await
                .map(|(call, _)| call);
        }
        if round >= plan.warmup_rounds {
            keep(&mut out, &results);
        }
        if progress && (round + 1) % 10 == 0 {
            eprint!(
                "\r  trial {} {}: round {}/{}   ",
                trial + 1,
                request.scenario,
                round + 1,
                total
            );
        }
        if !plan.round_gap.is_zero() {
            tokio::time::sleep(plan.round_gap).await;
        }
    }
    if progress {
        eprint!("\r{:60}\r", "");
    }
    for (target, pool) in out.iter_mut().zip(&pools) {
        target.connections_opened = pool.opened.get();
        target.connections_reused = pool.reused.get();
    }
    out
}

/// One connection to each target, opened before the first round.
pub(super) async fn open_pools(plan: &OverheadPlan) -> Vec<Rc<Http1Pool>> {
    let pools: Vec<Rc<Http1Pool>> = plan
        .targets
        .iter()
        .map(|t| {
            // Paired rounds speak HTTP/1.1; an https:// target is checked against the
            // system's trusted certificates.
            let transport = crate::wire::transport::Transport::default();
            Rc::new(Http1Pool::new(t.target.clone(), transport, 1, plan.timeout))
        })
        .collect();
    for pool in &pools {
        // A target that cannot be reached fails its calls, counted by the rounds.
        let _ = pool.preopen(1).await;
    }
    pools
}

/// One call of round `seq` to one target, timed from its send; with `keep_answer`, the
/// answer's body too (a session's turn resends it).
pub(super) async fn call(
    plan: &OverheadPlan,
    pool: &Http1Pool,
    template: &RequestTemplate,
    request: &RequestSpec,
    clock: &RunClock,
    seq: u64,
    keep_answer: bool,
) -> Result<(Call, Option<Vec<u8>>), ErrorKind> {
    let sent_mono = gatebench_shared::clock::monotonic_ns();
    let now = clock.now_ns();
    let slot = Slot {
        index: seq,
        due_ns: now,
        dispatched_ns: now,
        keep_answer,
    };
    let mut x = tokio::time::timeout(
        plan.timeout,
        spinning(plan.spin, exchange(pool, template, request, clock, slot)),
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
    let answer = x.kept.take().map(|k| k.answer);
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

/// A measured round's calls, one per target: the successes kept, the failures counted.
fn keep(out: &mut [TargetCalls], results: &[Result<Call, ErrorKind>]) {
    for (target, result) in out.iter_mut().zip(results) {
        target.calls.push(result.ok());
        if let Err(kind) = result {
            *target.errors.entry(kind.key()).or_default() += 1;
        }
    }
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
