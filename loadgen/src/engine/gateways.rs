//! The targets of a comparison: the direct upstream first, then each gateway by name, with what
//! the user disclosed about it (`--direct`, `--gateway NAME=URL`, `--gateway-info NAME=TEXT`,
//! `--gateway-recording NAME=LEVEL`).

use crate::model::target::{Named, SAME_PROCESS, TWIN_GIVEN};

use crate::generator::plan_error::PlanError;
use crate::model::role::Role;
use crate::wire::connect_to::ConnectTo;
use crate::wire::target::parse_target_via;

/// What the user disclosed about the gateways: `--gateway-info` and `--gateway-recording`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disclosed<'a> {
    pub infos: &'a [String],
    pub recordings: &'a [String],
}

/// Puts the twin (`--twin URL`, or by default the direct URL again, on its own connections,
/// which `engine::twin::settle` replaces with a second mock process when it can; `none` for
/// no twin) second in `targets`. Returns whether there is one.
pub fn with_twin(
    targets: &mut Vec<Named>,
    twin: Option<&str>,
    direct: Option<&str>,
    rules: &[ConnectTo],
) -> Result<bool, PlanError> {
    let twin = match twin {
        Some("none") => None,
        Some(url) => Some((url, TWIN_GIVEN)),
        None => direct.map(|url| (url, SAME_PROCESS)),
    };
    let Some((url, info)) = twin else {
        return Ok(false);
    };
    targets.insert(
        1,
        Named {
            name: Role::Twin,
            target: parse_target_via(url, rules)?,
            info: Some(info.to_string()),
            recording: None,
        },
    );
    Ok(true)
}

/// `--min-effect` in µs (0 when not given).
pub fn min_effect_us(text: Option<&str>) -> Result<f64, PlanError> {
    match text {
        Some(text) => gatebench_shared::duration::parse_us(text)
            .map(|us| us as f64)
            .ok_or_else(|| PlanError::Duration("--min-effect", text.to_string(), "")),
        None => Ok(0.0),
    }
}

/// The direct target, then the gateways ([`named_gateways`]); `rules` are the `--connect-to`
/// rules.
pub fn named_targets(
    direct: Option<&str>,
    gateways: &[String],
    disclosed: Disclosed<'_>,
    rules: &[ConnectTo],
) -> Result<Vec<Named>, PlanError> {
    let direct = direct.ok_or(PlanError::Missing(
        "--direct URL (the upstream called without a gateway)",
    ))?;
    let mut targets = vec![Named {
        name: Role::Direct,
        target: parse_target_via(direct, rules)?,
        info: None,
        recording: None,
    }];
    targets.extend(named_gateways(gateways, disclosed, rules)?);
    Ok(targets)
}

/// The gateways (`--gateway NAME=URL`, at least one), each with what was disclosed about it.
pub fn named_gateways(
    gateways: &[String],
    disclosed: Disclosed<'_>,
    rules: &[ConnectTo],
) -> Result<Vec<Named>, PlanError> {
    if gateways.is_empty() {
        return Err(PlanError::Missing("--gateway NAME=URL (at least one)"));
    }
    let mut targets: Vec<Named> = Vec::new();
    for text in gateways {
        let (name, url) = split_named("--gateway", text)?;
        let name = Role::from_name(name);
        let refused = match &name {
            Role::Twin => Some("another name: 'twin' is the A/A control (--twin)"),
            Role::Direct => Some("each name once, and not 'direct'"),
            Role::Gateway(_) if targets.iter().any(|t| t.name == name) => {
                Some("each name once, and not 'direct'")
            }
            Role::Gateway(_) => None,
        };
        if let Some(why) = refused {
            return Err(PlanError::Named("--gateway", text.clone(), why));
        }
        targets.push(Named {
            name,
            target: parse_target_via(url, rules)?,
            info: None,
            recording: None,
        });
    }
    for text in disclosed.infos {
        let (name, info) = split_named("--gateway-info", text)?;
        gateway(&mut targets, "--gateway-info", text, name)?.info = Some(info.to_string());
    }
    for text in disclosed.recordings {
        let (name, level) = split_named("--gateway-recording", text)?;
        let level = level.parse().map_err(|()| {
            PlanError::Named(
                "--gateway-recording",
                text.clone(),
                "NAME=off, NAME=defaults or NAME=full",
            )
        })?;
        gateway(&mut targets, "--gateway-recording", text, name)?.recording = Some(level);
    }
    Ok(targets)
}

/// The gateway a disclosure names.
fn gateway<'t>(
    targets: &'t mut [Named],
    flag: &'static str,
    text: &str,
    name: &str,
) -> Result<&'t mut Named, PlanError> {
    targets
        .iter_mut()
        .find(|t| t.name.as_str() == name)
        .ok_or_else(|| PlanError::Named(flag, text.to_string(), "the name of a --gateway"))
}

/// Refuses the run (exit 2) unless every target answers a connection, and returns the direct
/// target's configuration when it is a gatebench mock, for the result to disclose.
pub fn reach(
    targets: &[Named],
    timeout: std::time::Duration,
) -> Result<Option<String>, crate::engine::run::SetupError> {
    for t in targets {
        crate::engine::run::probe(&t.target, timeout)?;
    }
    Ok(targets
        .first()
        .and_then(|t| crate::engine::disclose::mock_config(&t.target)))
}

/// `NAME=VALUE` with a non-empty name of letters, digits, `-`, `_` and `.`.
fn split_named<'a>(flag: &'static str, text: &'a str) -> Result<(&'a str, &'a str), PlanError> {
    let err = || PlanError::Named(flag, text.to_string(), "NAME=VALUE");
    let (name, value) = text.split_once('=').ok_or_else(err)?;
    let name = name.trim();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid || name == Role::DIRECT || value.trim().is_empty() {
        return Err(err());
    }
    Ok((name, value.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::target::Recording;

    fn targets(infos: &[&str], recordings: &[&str]) -> Result<Vec<Named>, PlanError> {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (infos, recordings) = (owned(infos), owned(recordings));
        named_targets(
            Some("http://127.0.0.1:9/v1/chat/completions"),
            &["gw=http://127.0.0.1:9/v1/chat/completions".into()],
            Disclosed {
                infos: &infos,
                recordings: &recordings,
            },
            &[],
        )
    }

    #[test]
    fn recording_levels_are_attached_and_shown() {
        let t = targets(&["gw=1.2.3"], &["gw=defaults"]).unwrap();
        assert_eq!(t[1].recording, Some(Recording::Defaults));
        assert_eq!(
            t[1].disclosure().as_deref(),
            Some("1.2.3; recording defaults")
        );
        assert_eq!(t[0].disclosure(), None);
        let t = targets(&[], &["gw=off"]).unwrap();
        assert_eq!(t[1].disclosure().as_deref(), Some("recording off"));
    }

    #[test]
    fn unknown_levels_and_names_are_refused() {
        let err = targets(&[], &["gw=verbose"]).unwrap_err().to_string();
        assert!(
            err.contains("NAME=off, NAME=defaults or NAME=full"),
            "{err}"
        );
        let err = targets(&[], &["other=off"]).unwrap_err().to_string();
        assert!(err.contains("the name of a --gateway"), "{err}");
        let err = targets(&[], &["direct=off"]).unwrap_err().to_string();
        assert!(err.contains("NAME=VALUE"), "{err}");
    }
}
