//! `loadgen check-profile COMMAND FILE`: reads a profile for a command and makes its plan,
//! sending nothing.

use std::path::{Path, PathBuf};

use crate::options::profile::{compare_and, overhead, run, PLACEHOLDER, PLACEHOLDER_GATEWAY};
use crate::options::{CompareArgs, LadderArgs, OverheadArgs, RunArgs, SweepArgs};

/// The options of a comparison with the placeholder direct target, over `profile`.
fn placeholder(profile: Option<PathBuf>) -> CompareArgs {
    CompareArgs {
        direct: Some(PLACEHOLDER.into()),
        run: RunArgs {
            profile,
            ..RunArgs::default()
        },
        ..CompareArgs::default()
    }
}

/// Checks `path` as a profile of `command` (run, overhead, compare, sweep or ladder) and
/// returns a one-line description of the plan it makes.
pub fn check(command: &str, path: &Path) -> anyhow::Result<String> {
    let invalid = |e: &dyn std::fmt::Display| anyhow::anyhow!("{}: {e}", path.display());
    let profile = Some(PathBuf::from(path));
    match command {
        "run" => {
            let mut args = run(RunArgs {
                profile,
                ..RunArgs::default()
            })?;
            args.profile = None;
            let plan = args.plan().map_err(|e| invalid(&e))?;
            Ok(format!("run: {:?}", plan.load))
        }
        "overhead" => {
            let mut args = overhead(OverheadArgs {
                profile,
                ..OverheadArgs::default()
            })?;
            args.direct = args.direct.or_else(|| Some(PLACEHOLDER.into()));
            if args.gateways.is_empty() {
                args.gateways = vec![PLACEHOLDER_GATEWAY.into()];
            }
            let plan = args.plan().map_err(|e| invalid(&e))?;
            Ok(format!(
                "overhead: {} trials x {} rounds (+{} warm-up), {} scenario(s)",
                plan.trials,
                plan.rounds,
                plan.warmup_rounds,
                plan.requests.len()
            ))
        }
        "compare" | "sweep" | "ladder" => {
            let own: &[&str] = match command {
                "sweep" => &["levels", "level-kind"],
                "ladder" => &["levels"],
                _ => &[],
            };
            let args = placeholder(profile);
            // The profile read here, so the placeholder gateway stands only where it has none;
            // each command's plan is then made as the command makes it.
            let (mut args, mut mine) = compare_and(args, own)?;
            if args.gateways.is_empty() {
                args.gateways = vec![PLACEHOLDER_GATEWAY.into()];
            }
            args.run.profile = None;
            let levels = mine.remove("levels");
            match command {
                "compare" => {
                    let p = crate::commands::compare::ComparePlan::new(args)
                        .map_err(|e| invalid(&e))?;
                    Ok(format!(
                        "compare: {:?}, {} trial(s) per target",
                        p.plan.load, p.comparison.trials
                    ))
                }
                "sweep" => {
                    let level_kind = mine
                        .remove("level-kind")
                        .map(|t| crate::commands::sweep::parse_level_kind(&t))
                        .transpose()
                        .map_err(|e| invalid(&e))?;
                    let p = crate::commands::sweep::SweepPlan::new(SweepArgs {
                        levels,
                        level_kind,
                        compare: args,
                    })
                    .map_err(|e| invalid(&e))?;
                    Ok(format!(
                        "sweep: {} {} level(s), {} trial(s) each",
                        p.levels.len(),
                        p.kind,
                        p.comparison.trials
                    ))
                }
                _ => {
                    let p = crate::commands::ladder::LadderPlan::new(LadderArgs {
                        levels,
                        compare: args,
                    })
                    .map_err(|e| invalid(&e))?;
                    Ok(format!(
                        "ladder: {} level(s) of simultaneous streams",
                        p.levels.len()
                    ))
                }
            }
        }
        "capacity" => {
            let mut args = crate::options::CapacityArgs {
                compare: placeholder(profile),
                ..Default::default()
            };
            // Without a profile's --slo the plan is refused, as the command refuses it.
            args.compare.gateways = Vec::new();
            let p = crate::commands::capacity::CapacityPlan::new(args).map_err(|e| invalid(&e))?;
            Ok(format!(
                "capacity: {} from {} to {} req/s, within {:.0}%, at most {} runs per target",
                p.slo.text,
                p.start_rate,
                p.max_rate,
                p.precision * 100.0,
                p.max_runs
            ))
        }
        "profile" => {
            let mut args = crate::options::ProfileArgs {
                // This process stands for the gateway's: nothing is sampled.
                pid: Some(std::process::id()),
                compare: placeholder(profile),
                ..Default::default()
            };
            let own = ["frequency", "call-graph", "off-cpu"];
            if compare_and(args.compare.clone(), &own)?
                .0
                .gateways
                .is_empty()
            {
                args.compare.gateways = vec![PLACEHOLDER_GATEWAY.into()];
            }
            let p = crate::commands::perf::ProfilePlan::new(args).map_err(|e| invalid(&e))?;
            Ok(format!(
                "profile: {:?}, {} trial(s), {} Hz, {} stacks, off-CPU {}",
                p.plan.load,
                p.comparison.trials,
                p.frequency,
                p.call_graph.name(),
                if p.off_cpu { "on" } else { "off" }
            ))
        }
        other => Err(anyhow::anyhow!(
            "unknown command '{other}': expected run, overhead, compare, sweep, ladder, capacity \
             or profile"
        )),
    }
}
