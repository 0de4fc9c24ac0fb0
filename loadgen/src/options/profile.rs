//! Profiles: every command's flags merged over its `--profile` file (the one place a profile is
//! read), and checking a profile without sending anything: it parses as the options of its
//! command and those options make a valid plan (`loadgen check-profile COMMAND FILE`, and the
//! tests on every file in `profiles/`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::de::DeserializeOwned;

use crate::options::CompareArgs;
use crate::options::OverheadArgs;
use crate::options::RunArgs;

/// A profile file that cannot be used: the message names the file and what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ProfileError(pub String);

/// The profile at `path` as the options of a command.
fn read<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read profile {}", path.display()))?;
    Ok(toml::from_str(&text)
        .map_err(|e| ProfileError(format!("invalid profile {}: {e}", path.display())))?)
}

/// `run`'s flags with those of `--profile` under them.
pub fn run(args: RunArgs) -> anyhow::Result<RunArgs> {
    match &args.profile {
        Some(path) => {
            let profile = anchored(read(path)?, path);
            Ok(args.over(profile))
        }
        None => Ok(args),
    }
}

/// A profile's files (`requests-file`, `trace`, `cacert`) found beside the profile when their paths are
/// relative, so a profile and its corpus move together.
fn anchored(mut profile: RunArgs, path: &Path) -> RunArgs {
    let dir = path.parent().unwrap_or(Path::new("."));
    for file in [
        &mut profile.requests_file,
        &mut profile.trace,
        &mut profile.cacert,
    ]
    .into_iter()
    .flatten()
    {
        if file.is_relative() {
            *file = dir.join(&*file);
        }
    }
    profile
}

/// `overhead`'s flags with those of `--profile` under them.
pub fn overhead(args: OverheadArgs) -> anyhow::Result<OverheadArgs> {
    match &args.profile {
        Some(path) => {
            let profile = read(path)?;
            Ok(args.over(profile))
        }
        None => Ok(args),
    }
}

/// Keys of a profile that belong to `compare` rather than to the load.
const COMPARE_KEYS: [&str; 9] = [
    "direct",
    "gateway",
    "gateway-info",
    "trials",
    "sample-pid",
    "gateway-recording",
    "settle",
    "twin",
    "min-effect",
];

/// `compare`'s flags with those of `--profile` under them.
pub fn compare(args: CompareArgs) -> anyhow::Result<CompareArgs> {
    Ok(compare_and(args, &[])?.0)
}

/// [`compare`] for a command with keys of its own (`levels`, …): those keys of the
/// profile, as text (an array of numbers is joined with commas), come back beside.
pub fn compare_and(
    mut args: CompareArgs,
    own: &[&str],
) -> anyhow::Result<(CompareArgs, BTreeMap<String, String>)> {
    let mut mine = BTreeMap::new();
    let Some(path) = args.run.profile.clone() else {
        return Ok((args, mine));
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read profile {}", path.display()))?;
    let invalid = |e: String| ProfileError(format!("invalid profile {}: {e}", path.display()));
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    for key in own {
        let text = match table.remove(*key) {
            None => continue,
            Some(toml::Value::String(s)) => s,
            Some(toml::Value::Integer(n)) => n.to_string(),
            Some(toml::Value::Float(n)) => n.to_string(),
            Some(toml::Value::Array(items)) => {
                let parts: Result<Vec<String>, ProfileError> = items
                    .into_iter()
                    .map(|v| match v {
                        toml::Value::Integer(n) => Ok(n.to_string()),
                        toml::Value::Float(n) => Ok(n.to_string()),
                        toml::Value::String(s) => Ok(s),
                        other => Err(invalid(format!("{key}: expected numbers, found {other}"))),
                    })
                    .collect();
                parts?.join(",")
            }
            Some(other) => return Err(invalid(format!("{key}: unexpected {other}")).into()),
        };
        mine.insert((*key).to_string(), text);
    }
    let strings = |v: Option<toml::Value>| -> Result<Vec<String>, ProfileError> {
        match v {
            None => Ok(Vec::new()),
            Some(toml::Value::String(s)) => Ok(vec![s]),
            Some(toml::Value::Array(a)) => a
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    other => Err(invalid(format!("expected text, found {other}"))),
                })
                .collect(),
            Some(other) => Err(invalid(format!("expected text, found {other}"))),
        }
    };
    debug_assert!(COMPARE_KEYS.iter().all(|k| !own.contains(k)));
    let mut take = |key: &str| {
        debug_assert!(COMPARE_KEYS.contains(&key));
        strings(table.remove(key))
    };
    let direct = take("direct")?.into_iter().next();
    let gateways = take("gateway")?;
    let infos = take("gateway-info")?;
    let sample = take("sample-pid")?;
    let recordings = take("gateway-recording")?;
    let settle = take("settle")?.into_iter().next();
    let twin = take("twin")?.into_iter().next();
    let min_effect = take("min-effect")?.into_iter().next();
    let trials = match table.remove("trials") {
        None => None,
        Some(toml::Value::Integer(n)) if n > 0 => Some(n as usize),
        Some(other) => {
            return Err(invalid(format!("trials: expected a count, found {other}")).into())
        }
    };
    let run: RunArgs = table
        .try_into()
        .map_err(|e: toml::de::Error| invalid(e.to_string()))?;
    let run = anchored(run, &path);
    args.direct = args.direct.or(direct);
    if args.gateways.is_empty() {
        args.gateways = gateways;
    }
    if args.gateway_info.is_empty() {
        args.gateway_info = infos;
    }
    if args.gateway_recording.is_empty() {
        args.gateway_recording = recordings;
    }
    args.trials = args.trials.or(trials);
    args.settle = args.settle.or(settle);
    args.twin = args.twin.or(twin);
    args.min_effect = args.min_effect.or(min_effect);
    if args.sample.is_empty() {
        args.sample = sample;
    }
    args.run = args.run.over(run);
    Ok((args, mine))
}

/// Stand-in targets for profiles that leave the targets to the command line (nothing is sent
/// to them: plans only parse and resolve them).
pub(crate) const PLACEHOLDER: &str = "http://127.0.0.1:9/v1/chat/completions";
pub(crate) const PLACEHOLDER_GATEWAY: &str = "gateway=http://127.0.0.1:9/v1/chat/completions";
