//! One trial of paired rounds of conversations (`overhead --sessions`): round r sends one
//! session to every target, turn by turn; at each turn every target is called once, in an
//! order shuffled by a seeded generator, each with its own history (its own upstream's answers
//! so far). The calls of a turn are paired like single requests' calls; each turn number is a
//! scenario of its own in the result (`chat-stream turn 3`). Think times are not waited: the
//! rounds measure what a gateway adds, and a round's calls follow each other.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::generator::sessions::answer;
use crate::generator::sessions::body::{Conversation, Dialect};
use crate::generator::sessions::plan::SessionPlan;
use crate::wire::clock::RunClock;
use crate::wire::http1::RequestTemplate;
use crate::wire::outcome::Kept;
use crate::wire::target::RequestSpec;

use super::plan::OverheadPlan;
use super::rounds::{call, open_pools, TargetCalls};

/// Turn numbers past this are not measured (a round's session stops there).
pub const MOST_TURNS: usize = 64;

/// Runs trial `trial` of `sessions` on `request`'s body; per turn number from 1, one
/// `TargetCalls` per target in the plan's order.
pub fn run_trial(
    plan: &OverheadPlan,
    request: &RequestSpec,
    sessions: &SessionPlan,
    trial: usize,
    stop: &AtomicBool,
) -> Result<Vec<Vec<TargetCalls>>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot build a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    Ok(local.block_on(&runtime, rounds(plan, request, sessions, trial, stop)))
}

async fn rounds(
    plan: &OverheadPlan,
    request: &RequestSpec,
    sessions: &SessionPlan,
    trial: usize,
    stop: &AtomicBool,
) -> Vec<Vec<TargetCalls>> {
    let n = plan.targets.len();
    let pools = open_pools(plan).await;
    let clock = RunClock::starting_in(std::time::Duration::ZERO);
    let mut rng = Pcg64Mcg::seed_from_u64(plan.seed ^ (trial as u64).wrapping_mul(0x9E37_79B9));
    let mut order: Vec<usize> = (0..n).collect();
    let mut turns: Vec<Vec<TargetCalls>> = Vec::new();
    let total = plan.warmup_rounds + plan.rounds;
    let set = &sessions.set.sessions;
    for round in 0..total {
        if stop.load(Relaxed) {
            break;
        }
        let index = trial * total + round;
        let session = &set[index % set.len()];
        // Each target's own prompts, so no target reads cache entries another warmed.
        let mut talks: Vec<Conversation> = (0..n)
            .map(|i| {
                let salted = sessions.salted(trial, i);
                Conversation::new(
                    sessions.shape,
                    &request.body,
                    session,
                    salted.salt.as_deref(),
                )
            })
            .collect();
        let mut alive = vec![true; n];
        let measured = round >= plan.warmup_rounds;
        for (k, turn) in session.turns.iter().enumerate().take(MOST_TURNS) {
            order.shuffle(&mut rng);
            let mut results = vec![None; n];
            for &i in &order {
                if !alive[i] {
                    continue;
                }
                talks[i].user(&turn.user);
                let mut spec = request.clone();
                spec.body = talks[i].body(turn.max_tokens).bytes;
                let template = RequestTemplate::post(&plan.targets[i].target, &spec);
                let seq = (index as u64) << 16 | (k as u64 + 1);
                let got = call(plan, &pools[i], &template, &spec, &clock, seq, true).await;
                let read = |kept: Option<Box<Kept>>| {
                    answer::read_kept(&mut kept.unwrap_or_default(), spec.stream)
                };
                match got.map(|(c, kept)| (c, read(kept))) {
                    Ok((c, Some(a))) => {
                        talks[i].answered(&a);
                        if !a.calls.is_empty() {
                            talks[i].tool_results(&a.calls, turn.tool_result_tokens);
                        }
                        results[i] = Some(Ok(c));
                    }
                    Ok((_, None)) => {
                        alive[i] = false;
                        results[i] = Some(Err("invalid".to_string()));
                    }
                    Err(kind) => {
                        alive[i] = false;
                        results[i] = Some(Err(kind.key()));
                    }
                }
            }
            if measured {
                if turns.len() <= k {
                    turns.push((0..n).map(|_| TargetCalls::default()).collect());
                }
                for (target, result) in turns[k].iter_mut().zip(&results) {
                    match result {
                        Some(Ok(c)) => target.calls.push(Some(*c)),
                        Some(Err(key)) => {
                            target.calls.push(None);
                            *target.errors.entry(key.clone()).or_default() += 1;
                        }
                        None => {
                            target.calls.push(None);
                            *target
                                .errors
                                .entry("earlier_turn_failed".into())
                                .or_default() += 1;
                        }
                    }
                }
            }
        }
        if !plan.round_gap.is_zero() {
            tokio::time::sleep(plan.round_gap).await;
        }
    }
    for turn in &mut turns {
        for (target, pool) in turn.iter_mut().zip(&pools) {
            target.connections_opened = pool.opened.get();
            target.connections_reused = pool.reused.get();
        }
    }
    turns
}

/// The API a session's bodies are written for, from the direct target's route.
pub fn dialect(plan: &OverheadPlan) -> Dialect {
    Dialect::of_path(plan.targets.first().map_or("/", |t| t.target.path.as_str()))
}
