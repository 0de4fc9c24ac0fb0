//! `loadgen profile --memory`: every trial runs direct and its twin (with `--direct`), the
//! gateway as itself, then the gateway probed (`NAME+memory`); the probed windows' counts become
//! figures per request with an interval across trials, and the gateway's own runs give the CPU
//! that a modeled cost is drawn from.

use crate::engine::profiler::cpu::GatewayCpu;
use crate::engine::profiler::memory::{MemorySession, Settings};
use crate::engine::profiler::rest;
use crate::engine::profiler::source::Source;
use crate::results::memory::MemoryProfile;
use crate::results::profile::ProfileResult;

use super::super::trials::{self, Found, Start};
use super::super::{empty_profile, ProfilePlan};
use super::figures::{cost_of, figures};
use super::MemoryPlan;

/// Runs the profile with its memory plan and returns the result with the exit code it earns.
pub fn run(
    p: ProfilePlan,
    m: MemoryPlan,
    command: Vec<String>,
) -> anyhow::Result<(ProfileResult, u8)> {
    let mut comparison = p.comparison;
    let plan = p.plan;
    let start = Start::new(&mut comparison, &plan)?;

    let n = comparison.targets.len();
    let probed = comparison.targets[n - 1].name.clone();
    let unprobed = comparison.targets[n - 2].name.clone();
    let (mut session, unavailable) = session_of(p.pid, &m, &mut comparison.targets);
    // Memory at rest before any load (the first trial's warming is told from later growth).
    let pids = crate::engine::sampler::with_descendants(p.pid);
    let before_load = session.as_ref().and_then(|_| rest::sample(&pids, m.rest));

    let mut cpu = GatewayCpu::new(p.pid);
    let ran = trials::run(&plan, &comparison, &mut |t, w| {
        if t.name == probed {
            if let Some(s) = session.as_mut() {
                s.window(w);
            }
        } else if t.name == unprobed {
            cpu.window(w);
        }
    });

    let mut memory = MemoryProfile {
        source: m.source.as_ref().ok().map(|s| s.name().to_string()),
        counts: m
            .source
            .as_ref()
            .map_or(String::new(), |s| s.counts().to_string()),
        tool: m
            .tool
            .clone()
            .or_else(|| m.source.as_ref().ok().map(describe_tool)),
        rest_before_load: before_load,
        ..Default::default()
    };
    if let Some(s) = session {
        figures(&mut memory, s, &ran.runs, [&unprobed, &probed]);
    }
    memory.unavailable.splice(0..0, unavailable);
    let mut profile = empty_profile(&p.gateway, &probed, p.pid, p.frequency, p.call_graph);
    profile.unavailable.push(
        "CPU not sampled: --memory counts allocations in the probed runs instead (the two \
         probes' costs would mix)"
            .into(),
    );
    profile.processes = memory.processes.clone();
    if let Some(out) = plan.out.as_deref().filter(|o| o.as_os_str() != "-") {
        memory.files = super::files::write_beside(&memory, out)?;
    }
    let cost_model = m.price.as_ref().and_then(|price| {
        cost_of(
            price,
            &cpu,
            &ran.resources,
            &ran.runs,
            &unprobed,
            &mut memory.unavailable,
        )
    });
    let found = Found {
        profile,
        memory: Some(memory),
        cost_model,
    };
    Ok(trials::result(start, command, plan, comparison, ran, found))
}

/// The session for the plan's source; without one, the reason (said now, before any load)
/// and the probed target left out of `targets`.
fn session_of(
    pid: u32,
    m: &MemoryPlan,
    targets: &mut Vec<crate::model::target::Named>,
) -> (Option<MemorySession>, Vec<String>) {
    match &m.source {
        Ok(source) => (
            Some(MemorySession::new(Settings {
                pid,
                source: source.clone(),
                bpftrace: m.bpftrace.clone(),
                rest: m.rest,
                live: m.live,
            })),
            Vec::new(),
        ),
        Err(reason) => {
            gatebench_shared::say!("loadgen: no memory counts: {reason}; the load still runs");
            targets.pop();
            (None, vec![format!("no memory counts: {reason}")])
        }
    }
}

/// What a runtime source read, for the result.
fn describe_tool(source: &Source) -> String {
    match source {
        Source::Go { metrics, pprof } => format!(
            "{}{}",
            metrics.url,
            pprof.as_ref().map_or(String::new(), |p| format!(
                ", heap profile {}/allocs",
                p.url
            ))
        ),
        Source::Node { endpoint } => format!("V8 sampling heap profiler at {}", endpoint.url),
        Source::CAllocator { .. } => "bpftrace".into(),
    }
}
