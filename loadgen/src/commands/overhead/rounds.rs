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

use crate::engine::paired::{self, Call};
use crate::wire::clock::RunClock;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::http1::RequestTemplate;
use crate::wire::outcome::{ErrorKind, Kept};
use crate::wire::target::RequestSpec;

use super::plan::OverheadPlan;

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

/// One connection to each of the plan's targets, opened before the first round.
pub(super) async fn open_pools(plan: &OverheadPlan) -> Vec<Rc<Http1Pool>> {
    let targets: Vec<_> = plan.targets.iter().map(|t| t.target.clone()).collect();
    paired::open_pools(&targets, plan.timeout).await
}

/// One call of round `seq` to one target, as the plan times it; with `keep_answer`, the kept
/// answer too (a session's turn resends it).
pub(super) async fn call(
    plan: &OverheadPlan,
    pool: &Http1Pool,
    template: &RequestTemplate,
    request: &RequestSpec,
    clock: &RunClock,
    seq: u64,
    keep_answer: bool,
) -> Result<(Call, Option<Box<Kept>>), ErrorKind> {
    let how = paired::Timing {
        timeout: plan.timeout,
        spin: plan.spin,
    };
    paired::call(how, pool, template, request, clock, seq, keep_answer).await
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
