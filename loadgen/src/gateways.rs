//! The targets of a comparison: the direct upstream first, then each gateway by name, with what
//! the user disclosed about it (`--direct`, `--gateway NAME=URL`, `--gateway-info NAME=TEXT`).

use serde::{Deserialize, Serialize};

use crate::plan::{parse_target, PlanError, Target};

/// A target with the name it is reported under.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Named {
    pub name: String,
    #[serde(flatten)]
    pub target: Target,
    /// What the user disclosed about it (version, settings).
    pub info: Option<String>,
}

/// Parses and resolves the direct target and the gateways, attaching their disclosures.
pub fn named_targets(
    direct: Option<&str>,
    gateways: &[String],
    infos: &[String],
) -> Result<Vec<Named>, PlanError> {
    let direct = direct.ok_or(PlanError::Missing(
        "--direct URL (the upstream called without a gateway)",
    ))?;
    if gateways.is_empty() {
        return Err(PlanError::Missing("--gateway NAME=URL (at least one)"));
    }
    let mut targets = vec![Named {
        name: "direct".into(),
        target: parse_target(direct)?,
        info: None,
    }];
    for text in gateways {
        let (name, url) = split_named("--gateway", text)?;
        if targets.iter().any(|t| t.name == name) {
            return Err(PlanError::Named(
                "--gateway",
                text.clone(),
                "each name once, and not 'direct'",
            ));
        }
        targets.push(Named {
            name: name.to_string(),
            target: parse_target(url)?,
            info: None,
        });
    }
    for text in infos {
        let (name, info) = split_named("--gateway-info", text)?;
        let target = targets[1..]
            .iter_mut()
            .find(|t| t.name == name)
            .ok_or(PlanError::Named(
                "--gateway-info",
                text.clone(),
                "the name of a --gateway",
            ))?;
        target.info = Some(info.to_string());
    }
    Ok(targets)
}

/// Refuses the run (exit 2) unless every target answers a connection, and returns the direct
/// target's configuration when it is a gatebench mock, for the result to disclose.
pub fn reach(
    targets: &[Named],
    timeout: std::time::Duration,
) -> Result<Option<String>, crate::run::SetupError> {
    for t in targets {
        crate::run::probe(&t.target, timeout)?;
    }
    Ok(targets
        .first()
        .and_then(|t| crate::disclose::mock_config(&t.target)))
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
    if !valid || name == "direct" || value.trim().is_empty() {
        return Err(err());
    }
    Ok((name, value.trim()))
}
