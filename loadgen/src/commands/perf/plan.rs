//! A `loadgen profile` checked into one plan before anything is sent: the flags over the
//! profile file, the one gateway and its process, the targets (direct, the twin, the gateway
//! unsampled and sampled), the sampling settings and the load.

use std::path::Path;

use crate::commands::compare::Comparison;
use crate::engine::gateways::with_twin;
use crate::engine::run::SetupError;
use crate::engine::sampler::{SampleSpec, Source};
use crate::generator::plan::{Plan, PlanError};
use crate::options::{CallGraph, ProfileArgs, PROFILE_FREQUENCY, PROFILE_TRIALS};
use crate::results::role::Role;

use super::SAMPLED;

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
}

impl ProfilePlan {
    /// Checks `args` (with its profile under it) without sending anything.
    pub fn new(args: ProfileArgs) -> anyhow::Result<ProfilePlan> {
        let own = ["frequency", "call-graph", "off-cpu"];
        let (compare, mut mine) = crate::options::profile::compare_and(args.compare.clone(), &own)?;
        let mut args = ProfileArgs { compare, ..args };
        args.frequency = args.frequency.or(match mine.remove("frequency") {
            Some(text) => Some(
                text.parse()
                    .map_err(|_| bad("--frequency", &text, "a count"))?,
            ),
            None => None,
        });
        args.call_graph = args.call_graph.or(mine.remove("call-graph"));
        args.off_cpu = args.off_cpu.or(mine.remove("off-cpu"));
        let pid = args.pid.ok_or_else(|| {
            SetupError::Other("profile needs --pid PID: the gateway's process".into())
        })?;
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(bad("--pid", &pid.to_string(), "a running process").into());
        }
        let frequency = match args.frequency.unwrap_or(PROFILE_FREQUENCY) {
            f @ 1..=20_000 => f,
            f => return Err(bad("--frequency", &f.to_string(), "1 to 20000 a second").into()),
        };
        let call_graph = match args.call_graph.as_deref() {
            None => CallGraph::Fp,
            Some(text) => CallGraph::parse(text)
                .ok_or_else(|| bad("--call-graph", text, "fp, dwarf or lbr"))?,
        };
        let off_cpu = match args.off_cpu.as_deref() {
            None | Some("on") => true,
            Some("off") => false,
            Some(text) => return Err(bad("--off-cpu", text, "on or off").into()),
        };
        let c = &args.compare;
        if c.gateways.len() != 1 {
            return Err(SetupError::Other(format!(
                "profile takes one --gateway NAME=URL (given {})",
                c.gateways.len()
            ))
            .into());
        }
        let mut named = match c.direct {
            Some(_) => c.targets("profile")?,
            None => c.gateway_targets("profile")?,
        };
        let gateway = named[named.len() - 1].name.clone();
        let twin = match (&c.direct, c.twin.as_deref()) {
            (None, Some(t)) if t != "none" => {
                return Err(SetupError::Other("--twin needs --direct".into()).into())
            }
            (None, _) => false,
            (Some(direct), twin) => with_twin(
                &mut named,
                twin,
                Some(direct),
                &c.run.transport()?.connect_to,
            )?,
        };
        let mut sampled = named[named.len() - 1].clone();
        sampled.name = Role::Gateway(format!("{}{SAMPLED}", sampled.name));
        named.push(sampled);
        let mut samples = crate::engine::sampler::sample_specs(&c.sample)?;
        if samples.is_empty() {
            samples.push(SampleSpec {
                name: gateway.as_str().to_string(),
                source: Source::Pid(pid),
            });
        }
        let comparison = Comparison {
            targets: named,
            twin,
            min_effect_us: crate::engine::gateways::min_effect_us(c.min_effect.as_deref())?,
            trials: c.trials(PROFILE_TRIALS)?,
            settle: c.settle(std::time::Duration::ZERO)?,
            samples,
        };
        let plan = c.run.clone().plan().map_err(SetupError::from)?;
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
        })
    }
}

fn bad(flag: &'static str, text: &str, expected: &'static str) -> SetupError {
    SetupError::from(PlanError::Named(flag, text.to_string(), expected))
}
