//! The targets a result names: a target as resolved (`Target`), and a target with its role
//! (which names it in reports) and what the user disclosed about it (`Named`, `Recording`).

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::results::role::Role;

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
