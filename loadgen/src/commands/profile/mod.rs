//! `loadgen profile`: a steady load on one gateway while perf samples its process after the
//! warm-up, so where its time goes is seen under the load that produced its latency.
//!
//! Every trial runs the gateway twice, once sampled (`NAME+perf`) and once not, so the result
//! says what the sampling itself cost; with `--direct`, the direct upstream and its twin run
//! in the same trials and the gateway's added latency is judged as `compare` judges it.
//!
//! perf itself (its checks, its sessions at each measured window, the stacks folded) is driven
//! from `engine::profiler::perf`; this folder holds the command's plan, flow and result.
//!
//! - `command`: the command, a sampled load or `--diff`.
//! - `plan`: the options checked into one plan before anything is sent.
//! - `diff`: `loadgen profile --diff BEFORE.folded AFTER.folded`.
//! - `memory`: `--memory`, a gateway's allocations counted at each probed window's edges.
//! - `trials`: what both share: the targets reached, every trial run, the one result.

mod command;
pub mod diff;
pub mod memory;
mod plan;
mod trials;

use std::path::{Path, PathBuf};

use crate::engine::comparison::{analysis, figures_of};
use crate::engine::profiler::perf::{perf_at_hand, scratch_dir, Session, Settings};
use crate::model::role::Role;
use crate::model::target::Named;
use crate::options::{CallGraph, ProfileArgs};
use crate::report::flame;
use crate::results::compare::{PercentileDelta, TrialFigures, TrialRun};
use crate::results::memory::PROBED;
use crate::results::profile::{Folded, Profile, ProfileResult, SAMPLED};
pub use plan::ProfilePlan;
use trials::{Found, Start};

/// Runs `loadgen profile` and returns the result with the exit code it earns. The folded
/// stacks are written beside `--out` (`NAME.on-cpu.folded`, `NAME.off-cpu.folded`).
pub fn run_profile(args: ProfileArgs, command: Vec<String>) -> anyhow::Result<(ProfileResult, u8)> {
    run_plan(ProfilePlan::new(args)?, command)
}

/// Runs `p` and returns the result with the exit code it earns.
fn run_plan(mut p: ProfilePlan, command: Vec<String>) -> anyhow::Result<(ProfileResult, u8)> {
    if let Some(memory) = p.memory.take() {
        return memory::run(p, memory, command);
    }
    let program = p.args.perf.clone().unwrap_or_else(|| PathBuf::from("perf"));
    let mut comparison = p.comparison;
    let plan = p.plan;
    let start = Start::new(&mut comparison, &plan)?;

    let dir = scratch_dir()?;
    let (perf, off_cpu, mut unavailable) =
        perf_at_hand(&program, p.pid, p.call_graph, p.off_cpu, &dir);
    let sampled_name = comparison.targets[comparison.targets.len() - 1]
        .name
        .clone();
    if perf.is_none() {
        // Nothing will sample it: the gateway runs once a trial, as itself.
        comparison.targets.pop();
    }
    let settings = Settings {
        pid: p.pid,
        frequency: p.frequency,
        call_graph: p.call_graph,
        off_cpu,
        dir: dir.clone(),
    };
    let mut session = perf.map(|perf| Session::new(perf, settings));

    // Every trial of every target, the sampled target's measured windows handed to perf.
    let ran = trials::run(&plan, &comparison, &mut |t, w| {
        if let (Some(session), true) = (session.as_mut(), t.name == sampled_name) {
            session.window(w);
        }
    });
    let mut profile = empty_profile(&p.gateway, &sampled_name, p.pid, p.frequency, p.call_graph);
    if let Some(session) = session {
        if !plan.quiet {
            gatebench_shared::say!("loadgen: folding the stacks");
        }
        unavailable.extend(folded(&mut profile, session, off_cpu));
    }
    let _ = std::fs::remove_dir_all(&dir);
    profile.unavailable = unavailable;
    if let Some(out) = plan.out.as_deref().filter(|o| o.as_os_str() != "-") {
        profile.files = write_beside(&profile, out)?;
    }
    let found = Found {
        profile,
        memory: None,
        cost_model: None,
    };
    Ok(trials::result(start, command, plan, comparison, ran, found))
}

/// The session's stacks folded into `profile`; what went wrong in folding them.
fn folded(profile: &mut Profile, session: Session, off_cpu: bool) -> Vec<String> {
    let processes = session.processes.clone();
    let (folding, problems, perf) = session.fold();
    profile.processes = processes;
    profile.windows = folding.windows;
    profile.recorded_s = folding.recorded_s;
    profile.on_cpu = Some(folding.on_cpu);
    profile.off_cpu = off_cpu.then_some(folding.off_cpu);
    profile.perf = Some(perf.version);
    problems
}

/// The profile of `sampled` (the gateway `gateway`, its process `pid`) before anything is recorded.
fn empty_profile(
    gateway: &Role,
    sampled: &Role,
    pid: u32,
    frequency: u32,
    call_graph: CallGraph,
) -> Profile {
    Profile {
        gateway: gateway.clone(),
        sampled_target: sampled.clone(),
        pid,
        processes: Vec::new(),
        perf: None,
        frequency_hz: frequency,
        call_graph,
        windows: 0,
        recorded_s: 0.0,
        on_cpu: None,
        off_cpu: None,
        unavailable: Vec::new(),
        files: Vec::new(),
    }
}

/// A path beside the result at `out`: `X.json` → `X{suffix}`.
fn beside(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.with_extension("").into_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Writes the folded stacks and the flame graph of each kind beside the result at `out`
/// (`X.on-cpu.folded`, `X.on-cpu.svg`, `X.off-cpu.folded`, `X.off-cpu.svg`).
fn write_beside(profile: &Profile, out: &Path) -> anyhow::Result<Vec<String>> {
    let mut written = Vec::new();
    for (kind, name) in [
        (flame::Kind::OnCpu, "on-cpu"),
        (flame::Kind::OffCpu, "off-cpu"),
    ] {
        let Some(folded) = profile.stacks(kind) else {
            continue;
        };
        let path = beside(out, &format!(".{name}.folded"));
        crate::report::output::write_atomically(&path, folded.to_text().as_bytes())?;
        written.push(path.display().to_string());
        if let Some(svg) = flame::of_profile(profile, kind) {
            let path = beside(out, &format!(".{name}.svg"));
            crate::report::output::write_atomically(&path, svg.as_bytes())?;
            written.push(path.display().to_string());
        }
    }
    Ok(written)
}

impl Profile {
    /// The stacks of `kind`, when recorded.
    pub fn stacks(&self, kind: flame::Kind) -> Option<&Folded> {
        match kind {
            flame::Kind::OnCpu => self.on_cpu.as_ref(),
            flame::Kind::OffCpu => self.off_cpu.as_ref(),
            flame::Kind::Bytes => None,
        }
    }
}

/// The summary of every target; the deltas against direct (when there is one), judged as
/// `compare` judges them; and the sampled runs against the unsampled ones (the profiler's cost).
fn analyse(
    targets: &[Named],
    runs: &[TrialRun],
    twin: bool,
    min_effect_us: f64,
) -> (
    Vec<crate::results::compare::TargetSummary>,
    Vec<PercentileDelta>,
    Vec<PercentileDelta>,
) {
    let figures = |name: &Role| -> Vec<TrialFigures> {
        runs.iter()
            .filter(|r| r.name == *name)
            .map(|r| figures_of(&r.run))
            .collect()
    };
    let direct = targets.first().is_some_and(|t| t.name.is_direct());
    let (summary, deltas) = if direct {
        crate::engine::comparison::analyse(targets, runs, twin, min_effect_us)
    } else {
        let summary = targets
            .iter()
            .map(|t| analysis::summarise(&t.name, &figures(&t.name)))
            .collect();
        (summary, Vec::new())
    };
    let mut cost = Vec::new();
    let [.., unsampled, sampled] = targets else {
        return (summary, deltas, cost);
    };
    let (sampled, unsampled) = (&sampled.name, &unsampled.name);
    if !sampled.as_str().ends_with(SAMPLED) && !sampled.as_str().ends_with(PROBED) {
        return (summary, deltas, cost);
    }
    if twin {
        cost.extend(analysis::deltas(
            &Role::Twin,
            &figures(&Role::Direct),
            &figures(&Role::Twin),
        ));
    }
    cost.extend(analysis::deltas(
        sampled,
        &figures(unsampled),
        &figures(sampled),
    ));
    analysis::judge(&mut cost, twin, min_effect_us);
    cost.retain(|d| !d.gateway.is_twin());
    (summary, deltas, cost)
}
