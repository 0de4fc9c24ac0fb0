//! The targets a run works with and its result names: a target as resolved (`Target`), and a target with its role
//! (which names it in reports) and what the user disclosed about it (`Named`, `Recording`);
//! how a result's resolution was obtained, in the words every report uses (`resolution_source`).

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::role::Role;

/// Where requests go: resolved once, so every connection goes to the same address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub url: String,
    /// `host[:port]` for the Host header.
    #[serde(default)]
    pub authority: String,
    #[serde(default)]
    pub path: String,
    pub resolved: SocketAddr,
    /// An `https://` target: TLS over the connection.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
}

/// A target with its role, which names it in reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Named {
    pub name: Role,
    #[serde(flatten)]
    pub target: Target,
    /// What the user disclosed about it (version, settings).
    pub info: Option<String>,
    /// How much the gateway records of each call (request logs, traces, spend), as the user
    /// declared it. Recording is often the largest part of a gateway's overhead, so results
    /// taken at different levels must not be compared as if alike.
    #[serde(default)]
    pub recording: Option<Recording>,
}

impl Named {
    /// The disclosure shown beside the target in reports, like `1.106.12; recording off`.
    pub fn disclosure(&self) -> Option<String> {
        match (&self.info, self.recording) {
            (None, None) => None,
            (Some(info), None) => Some(info.clone()),
            (None, Some(level)) => Some(format!("recording {level}")),
            (Some(info), Some(level)) => Some(format!("{info}; recording {level}")),
        }
    }
}

/// What was said of the twin among `targets` (empty when there is none or nothing was said).
pub fn twin_info(targets: &[Named]) -> String {
    said_of_twin(targets).unwrap_or_default()
}

fn said_of_twin(targets: &[Named]) -> Option<String> {
    targets
        .iter()
        .find(|t| t.name.is_twin())
        .and_then(|t| t.info.clone())
}

/// A gateway's recording level (`--gateway-recording NAME=LEVEL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recording {
    /// Nothing recorded per call: logging, tracing and spend tracking switched off.
    Off,
    /// What the gateway records out of the box.
    Defaults,
    /// Everything it can record: full request and response bodies, traces.
    Full,
}

impl FromStr for Recording {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        match text {
            "off" => Ok(Recording::Off),
            "defaults" => Ok(Recording::Defaults),
            "full" => Ok(Recording::Full),
            _ => Err(()),
        }
    }
}

impl fmt::Display for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Recording::Off => "off",
            Recording::Defaults => "defaults",
            Recording::Full => "full",
        })
    }
}

/// The twin's disclosure for `--twin URL`.
pub const TWIN_GIVEN: &str = "--twin URL (a second upstream, named by the user)";

/// The twin's disclosure when it is the direct URL again, before the reason is added.
pub const SAME_PROCESS: &str = "the direct URL again (same process)";

/// What the same-process twin misses, and how to get a twin with it, for a direct mock.
pub const SAME_PROCESS_ADVICE: &str = "this resolution holds no spread between processes; pass \
    --twin URL or put mock-upstream beside loadgen";

/// The same, when the direct target is not a local gatebench mock.
pub const SAME_PROCESS_ADVICE_NOT_MOCK: &str = "this resolution holds no spread between \
    processes; pass --twin URL (a second instance of the direct upstream) for one that does";

/// The twin's disclosure when loadgen started a second mock itself.
pub fn started_mock(binary: &str, version: &str, pid: u32, addr: &str) -> String {
    format!(
        "a second mock process started by loadgen ({binary} {version}, pid {pid}, on {addr}, \
         with the direct mock's configuration)"
    )
}

/// How the resolution of a result with `targets` was obtained: the twin's disclosure when
/// `twin`, else `none` (the reason there is no twin).
pub fn resolution_source(targets: &[Named], twin: bool, none: &str) -> String {
    match (twin, said_of_twin(targets)) {
        (true, Some(info)) => info,
        (true, None) => "a twin".to_string(),
        (false, _) => none.to_string(),
    }
}

/// `resolution_source` for a result without twin given `--twin none`.
pub const NO_TWIN: &str = "none (--twin none): verdicts against zero, widened by --min-effect";
