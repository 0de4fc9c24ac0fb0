//! Checking a profile file without sending anything: it parses as the options of its command
//! and those options make a valid plan. `loadgen check-profile COMMAND FILE`, and the tests on
//! every file in `profiles/`.

use std::path::Path;

use anyhow::Context as _;

use crate::cli::RunArgs;
use crate::compare::{with_profile_and, CompareArgs};
use crate::overhead::plan::OverheadArgs;

/// Stand-in targets for profiles that leave the targets to the command line (nothing is sent
/// to them: plans only parse and resolve them).
const PLACEHOLDER: &str = "http://127.0.0.1:9/v1/chat/completions";
const PLACEHOLDER_GATEWAY: &str = "gateway=http://127.0.0.1:9/v1/chat/completions";

/// Checks `path` as a profile of `command` (run, overhead, compare, sweep or ladder) and
/// returns a one-line description of the plan it makes.
pub fn check(command: &str, path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read profile {}", path.display()))?;
    let invalid = |e: &dyn std::fmt::Display| anyhow::anyhow!("{}: {e}", path.display());
    match command {
        "run" => {
            let args: RunArgs = toml::from_str(&text).map_err(|e| invalid(&e))?;
            let plan = args.plan().map_err(|e| invalid(&e))?;
            Ok(format!("run: {:?}", plan.load))
        }
        "overhead" => {
            let mut args: OverheadArgs = toml::from_str(&text).map_err(|e| invalid(&e))?;
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
            let args = CompareArgs {
                direct: Some(PLACEHOLDER.into()),
                run: RunArgs {
                    profile: Some(path.to_path_buf()),
                    ..RunArgs::default()
                },
                ..CompareArgs::default()
            };
            let (mut args, mut mine) = with_profile_and(args, own)?;
            if args.gateways.is_empty() {
                args.gateways = vec![PLACEHOLDER_GATEWAY.into()];
            }
            let mut run = args.run.clone();
            run.profile = None;
            let kind = mine
                .remove("level-kind")
                .unwrap_or_else(|| "concurrency".into());
            let levels = match command {
                "sweep" => {
                    let text = mine
                        .remove("levels")
                        .unwrap_or_else(|| "1,4,16,64,256".into());
                    let levels =
                        crate::sweep::parse_levels(&text, &kind).map_err(|e| invalid(&e))?;
                    // Each level sets the load; the profile's own must not clash with it.
                    if kind == "concurrency" {
                        run.concurrency = Some(levels[0] as usize);
                        run.rate = None;
                    } else {
                        run.rate = Some(levels[0].to_string());
                        run.concurrency = None;
                    }
                    levels.len()
                }
                "ladder" => {
                    let text = mine
                        .remove("levels")
                        .unwrap_or_else(|| "10,100,250,500,1000".into());
                    crate::ladder::parse_levels(&text)
                        .map_err(|e| invalid(&e))?
                        .len()
                }
                _ => 0,
            };
            let plan = run.plan().map_err(|e| invalid(&e))?;
            let trials = args.trials(if command == "compare" { 5 } else { 3 });
            let trials = trials.map_err(|e| invalid(&e))?;
            args.targets(command).map_err(|e| invalid(&e))?;
            crate::compare::sample_specs(&args.sample).map_err(|e| invalid(&e))?;
            Ok(match command {
                "compare" => format!("compare: {:?}, {trials} trial(s) per target", plan.load),
                "sweep" => format!("sweep: {levels} {kind} level(s), {trials} trial(s) each"),
                _ => format!("ladder: {levels} level(s) of simultaneous streams"),
            })
        }
        other => Err(anyhow::anyhow!(
            "unknown command '{other}': expected run, overhead, compare, sweep or ladder"
        )),
    }
}
