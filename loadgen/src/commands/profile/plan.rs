//! A `loadgen profile` checked into one plan before anything is sent: the flags over the
//! profile file, the one gateway and its process, the targets (direct, the twin, the gateway
//! unsampled and sampled), the sampling settings and the load.

use std::path::Path;

use super::super::Command;
use crate::engine::comparison::{gateways_only, named, settle, trials, Comparison};
use crate::engine::gateways::with_twin;
use crate::engine::run::SetupError;
use crate::engine::sampler::{SampleSpec, Source};
use crate::generator::plan::Plan;
use crate::generator::plan_error::PlanError;
use crate::model::role::Role;
use crate::options::{CallGraph, CompareArgs, ProfileArgs, PROFILE_FREQUENCY, PROFILE_TRIALS};

use super::SAMPLED;
use crate::results::memory::PROBED;

/// A validated `loadgen profile`: the comparison (targets, trials, resources) and the load.
#[derive(Debug)]
pub struct ProfilePlan {
    pub args: ProfileArgs,
    pub comparison: Comparison,
    pub plan: Plan,
    pub gateway: Role,
    pub pid: u32,
    pub frequency: u32,
    pub call_graph: CallGraph,
    pub off_cpu: bool,
    /// With `--memory`: the probed runs count allocations instead of sampling the CPU.
    pub memory: Option<super::memory::MemoryPlan>,
}

impl ProfilePlan {
    /// Checks `args` (with its profile under it) without sending anything.
    pub fn new(args: ProfileArgs) -> anyhow::Result<ProfilePlan> {
        let args = args.merged()?;
        let pid = args.pid.ok_or_else(|| {
            SetupError::Other("profile needs --pid PID: the gateway's process".into())
        })?;
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(bad("--pid", &pid.to_string(), "a running process").into());
        }
        let (frequency, call_graph, off_cpu) = sampling(&args)?;
        let c = &args.compare;
        let memory = super::memory::MemoryPlan::new(&args.memory, pid)?;
        let suffix = if memory.is_some() { PROBED } else { SAMPLED };
        let (comparison, gateway) = comparison(c, pid, suffix)?;
        let plan = c.load.clone().plan().map_err(SetupError::from)?;
        if plan.duration.is_none() {
            return Err(
                SetupError::Other("profile needs a finite --duration for each run".into()).into(),
            );
        }
        Ok(ProfilePlan {
            args,
            comparison,
            plan,
            gateway,
            pid,
            frequency,
            call_graph,
            off_cpu,
            memory,
        })
    }
}

/// The sampling settings: the frequency, how stacks are walked, and whether off-CPU time is
/// recorded.
fn sampling(args: &ProfileArgs) -> Result<(u32, CallGraph, bool), SetupError> {
    let frequency = match args.frequency.unwrap_or(PROFILE_FREQUENCY) {
        f @ 1..=20_000 => f,
        f => return Err(bad("--frequency", &f.to_string(), "1 to 20000 a second")),
    };
    let call_graph = match args.call_graph.as_deref() {
        None => CallGraph::Fp,
        Some(text) => {
            CallGraph::parse(text).ok_or_else(|| bad("--call-graph", text, "fp, dwarf or lbr"))?
        }
    };
    let off_cpu = match args.off_cpu.as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(text) => return Err(bad("--off-cpu", text, "on or off")),
    };
    Ok((frequency, call_graph, off_cpu))
}

/// The targets (direct and the twin only with `--direct`; the gateway unsampled and sampled,
/// under `NAME{suffix}`),
/// trials and resources of a profile, and the gateway's name.
fn comparison(c: &CompareArgs, pid: u32, suffix: &str) -> Result<(Comparison, Role), SetupError> {
    let gateways = &c.targets;
    if gateways.gateways.len() != 1 {
        return Err(SetupError::Other(format!(
            "profile takes one --gateway NAME=URL (given {})",
            gateways.gateways.len()
        )));
    }
    let mut named = match gateways.direct {
        Some(_) => named(gateways, &c.load, "profile")?,
        None => gateways_only(gateways, &c.load, "profile")?,
    };
    let gateway = named[named.len() - 1].name.clone();
    let twin = match (&gateways.direct, c.judge.twin.as_deref()) {
        (None, Some(t)) if t != "none" => {
            return Err(SetupError::Other("--twin needs --direct".into()))
        }
        (None, _) => false,
        (Some(direct), twin) => with_twin(
            &mut named,
            twin,
            Some(direct),
            &c.load.transport()?.connect_to,
        )?,
    };
    let mut sampled = named[named.len() - 1].clone();
    sampled.name = Role::Gateway(format!("{}{suffix}", sampled.name));
    named.push(sampled);
    let mut samples = crate::engine::sampler::sample_specs(&gateways.sample)?;
    if samples.is_empty() {
        samples.push(SampleSpec {
            name: gateway.as_str().to_string(),
            source: Source::Pid(pid),
        });
    }
    let comparison = Comparison {
        targets: named,
        twin,
        min_effect_us: crate::engine::gateways::min_effect_us(c.judge.min_effect.as_deref())?,
        trials: trials(c.judge.trials, PROFILE_TRIALS)?,
        settle: settle(c.pause.settle.as_deref(), std::time::Duration::ZERO)?,
        samples,
    };
    Ok((comparison, gateway))
}

fn bad(flag: &'static str, text: &str, expected: &'static str) -> SetupError {
    SetupError::from(PlanError::Named(flag, text.to_string(), expected))
}
