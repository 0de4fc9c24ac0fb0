//! The measurements of `loadgen selftest`, each on this machine as it is now: the kernel timer,
//! the loopback, loadgen's own schedule and the mock's own timing, and the verdicts of an
//! identical mock and a known delay in paired rounds.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use gatebench_shared::clock::monotonic_ns;
use gatebench_shared::timerfd::{lower_timer_slack, TimerFd};

use gatebench_shared::trials::{holm, AcrossTrials};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::engine::embedded::EmbeddedMock;
use crate::engine::judge::{judge, p_value, resolution_of};
use crate::engine::paired;
use crate::engine::run::run_target;
use crate::model::target::Target;
use crate::results::run::TargetRun;
use crate::wire::clock::RunClock;
use crate::wire::http1::RequestTemplate;
use crate::wire::target::RequestSpec;
use crate::LoadArgs;

/// Percentiles (µs) of a set of nanosecond samples: p50, p99, p99.9.
pub(super) fn percentiles_us(mut ns: Vec<u64>) -> [f64; 3] {
    ns.sort_unstable();
    let at = |q: f64| {
        let i = ((ns.len().saturating_sub(1)) as f64 * q).round() as usize;
        ns.get(i).copied().unwrap_or(0) as f64 / 1e3
    };
    [at(0.5), at(0.99), at(0.999)]
}

/// How late the kernel wakes this thread from a timerfd armed 1 ms ahead, for `wakes` wake-ups
/// (ns each).
pub(super) fn timer_lateness(wakes: usize) -> anyhow::Result<Vec<u64>> {
    lower_timer_slack();
    let timer = TimerFd::new()?;
    let mut late = Vec::with_capacity(wakes);
    for _ in 0..wakes {
        late.push(timer.sleep_blocking(monotonic_ns() + 1_000_000)?);
    }
    Ok(late)
}

/// Round trips of one byte over a loopback TCP connection (ns each): the floor under any
/// request's latency on this machine.
pub(super) fn loopback_round_trips(count: usize) -> anyhow::Result<Vec<u64>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut peer, _) = listener.accept()?;
        peer.set_nodelay(true)?;
        let mut byte = [0u8; 1];
        while peer.read(&mut byte)? == 1 {
            peer.write_all(&byte)?;
        }
        Ok(())
    });
    let mut client = TcpStream::connect(addr)?;
    client.set_nodelay(true)?;
    let mut rtt = Vec::with_capacity(count);
    let mut byte = [1u8; 1];
    for _ in 0..count {
        let sent = monotonic_ns();
        client.write_all(&byte)?;
        client.read_exact(&mut byte)?;
        rtt.push(monotonic_ns() - sent);
    }
    drop(client);
    let _ = echo.join();
    Ok(rtt)
}

/// Loads `args` (its rate and duration) on `target` with loadgen's defaults.
fn run_on(args: LoadArgs, mock: &EmbeddedMock) -> anyhow::Result<TargetRun> {
    let plan = args.plan_at(None)?;
    Ok(run_target(Arc::new(plan), mock.target.clone()))
}

/// Options for a run of `seconds` at `rate` req/s.
fn at_rate(rate: u32, seconds: &str) -> LoadArgs {
    LoadArgs {
        rate: Some(rate.to_string()),
        duration: Some(seconds.to_string()),
        warmup: Some("0s".to_string()),
        quiet: true,
        ..LoadArgs::default()
    }
}

/// loadgen's schedule lag (p50, p99 µs) at `rate` req/s for `seconds` against a mock that
/// answers at once.
pub(super) fn schedule_lag(rate: u32, seconds: &str, cores: usize) -> anyhow::Result<(u64, u64)> {
    let mock = EmbeddedMock::start(cores)?;
    let run = run_on(at_rate(rate, seconds), &mock)?;
    let lag = run
        .metrics
        .get("schedule_lag")
        .ok_or_else(|| anyhow::anyhow!("the run at {rate} req/s recorded no schedule lag"))?;
    Ok((lag.p50, lag.p99))
}

/// The mock's emission error (p50, p99 µs) answering `latency` after each request, at 200
/// req/s for `seconds`.
pub(super) fn mock_error(
    latency: &str,
    seconds: &str,
    cores: usize,
) -> anyhow::Result<Option<(u64, u64)>> {
    let mock = EmbeddedMock::with_latency(cores, Some(latency))?;
    run_on(at_rate(200, seconds), &mock)?;
    Ok(mock
        .emission_error_us(0.5)
        .zip(mock.emission_error_us(0.99)))
}

/// The name of the identical target judged as a gateway.
pub(super) const IDENTICAL: &str = "identical";
/// Trials of paired rounds behind each verdict.
const TRIALS: usize = 5;

/// A median's added latency across trials, and its verdict.
#[derive(Debug, Clone)]
pub(super) struct Verdict {
    pub added_us: f64,
    pub verdict: String,
}

/// The verdicts of an identical mock and of one that answers 20 µs later, each a process-local
/// mock of its own, against a mock direct, in [`TRIALS`] trials of `rounds` paired rounds
/// (every mock called once a round, in a seeded shuffled order, on kept-alive connections), as
/// `overhead` pairs them; judged against the resolution of a twin (a fourth identical mock).
/// Returns the identical's verdict, the known delay's, and the resolution (µs).
pub(super) fn verdicts(rounds: usize, cores: usize) -> anyhow::Result<(Verdict, Verdict, f64)> {
    let mocks = [
        EmbeddedMock::start(cores)?,
        EmbeddedMock::start(cores)?,
        EmbeddedMock::start(cores)?,
        EmbeddedMock::with_latency(cores, Some("20us"))?,
    ];
    let targets: Vec<Target> = mocks.iter().map(|m| m.target.clone()).collect();
    let request = at_rate(200, "1s").plan_at(None)?.request;
    // Per trial, each non-direct mock's median difference to direct (twin, identical, known).
    let mut medians: [Vec<f64>; 3] = Default::default();
    for trial in 0..TRIALS {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let local = tokio::task::LocalSet::new();
        let e2e = local.block_on(&runtime, paired_rounds(&targets, &request, rounds, trial));
        for (g, out) in medians.iter_mut().enumerate() {
            let diffs: Vec<f64> = e2e[0]
                .iter()
                .zip(&e2e[g + 1])
                .filter_map(|(d, x)| Some((*x)? - (*d)?))
                .collect();
            if let Some(m) = gatebench_shared::stats::median(&diffs) {
                out.push(m);
            }
        }
    }
    let across = |g: usize| AcrossTrials::of_estimates(&medians[g]);
    let twin = across(0).ok_or_else(|| anyhow::anyhow!("the twin answered in too few trials"))?;
    let resolution = resolution_of(Some(&twin), 0.0);
    let figures = [1, 2].map(across);
    let p: Vec<f64> = figures
        .iter()
        .map(|f| f.as_ref().map_or(1.0, |f| p_value(f, Some(&twin), 0.0)))
        .collect();
    let adjusted = holm(&p);
    let judged = |i: usize| match &figures[i] {
        Some(f) => Verdict {
            added_us: f.mean,
            verdict: judge(adjusted[i], f.interval(0.95), resolution, f.trials, false),
        },
        None => Verdict {
            added_us: f64::NAN,
            verdict: "no trial gave a median to judge".into(),
        },
    };
    Ok((judged(0), judged(1), resolution))
}

/// `rounds` paired rounds (after 20 to warm up) of trial `trial`: each target's end-to-end time
/// per round, µs (`None` where a call failed).
async fn paired_rounds(
    targets: &[Target],
    request: &RequestSpec,
    rounds: usize,
    trial: usize,
) -> Vec<Vec<Option<f64>>> {
    let timeout = Duration::from_secs(5);
    let pools = paired::open_pools(targets, timeout).await;
    let templates: Vec<RequestTemplate> = targets
        .iter()
        .map(|t| RequestTemplate::post(t, request))
        .collect();
    let clock = RunClock::starting_in(Duration::ZERO);
    // As `overhead` calls by default: the runtime spins while a call waits, so the answer is
    // seen the moment it arrives.
    let how = paired::Timing {
        timeout,
        spin: true,
    };
    let mut rng = Pcg64Mcg::seed_from_u64(0x5e1f ^ trial as u64);
    let mut order: Vec<usize> = (0..targets.len()).collect();
    let mut e2e = vec![Vec::with_capacity(rounds); targets.len()];
    const WARMUP: usize = 20;
    for round in 0..WARMUP + rounds {
        order.shuffle(&mut rng);
        let seq = (trial * (WARMUP + rounds) + round) as u64;
        for &i in &order {
            let got = paired::call(how, &pools[i], &templates[i], request, &clock, seq, false)
                .await
                .ok()
                .map(|(call, _)| call.e2e_us);
            if round >= WARMUP {
                e2e[i].push(got);
            }
        }
    }
    e2e
}
