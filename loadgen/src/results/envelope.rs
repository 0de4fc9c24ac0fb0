//! The header every result file carries, whatever its kind: which format and build wrote it,
//! the command line, when, on what host, with which open-file limit. Flattened into each
//! result type (its keys sit at the top of the JSON) and read back the same way by the reports.

use gatebench_shared::host::{HostFacts, OpenFileLimit};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    /// The result's format, like `gatebench.loadgen.run/1`.
    #[serde(default)]
    pub schema: String,
    #[serde(default)]
    pub gatebench_version: String,
    /// The command line, one argument an entry.
    #[serde(default)]
    pub command: Vec<String>,
    /// RFC 3339, UTC.
    #[serde(default)]
    pub started_at: String,
    /// Empty in results too old to disclose it.
    #[serde(default = "unknown_host")]
    pub host: HostFacts,
    /// The open-file limit the run had, after raising it.
    #[serde(default)]
    pub open_files: Option<OpenFiles>,
}

/// The host of a result that does not say.
fn unknown_host() -> HostFacts {
    HostFacts {
        cpu_model: String::new(),
        cores: 0,
        kernel: String::new(),
        memory_bytes: 0,
        hostname: String::new(),
    }
}

impl Envelope {
    /// The header of a result in format `schema`, written by this build on this host.
    pub fn new(
        schema: &str,
        command: Vec<String>,
        started_at: String,
        open_files: Option<OpenFileLimit>,
    ) -> Envelope {
        Envelope {
            schema: schema.to_string(),
            gatebench_version: env!("CARGO_PKG_VERSION").to_string(),
            command,
            started_at,
            host: HostFacts::read(),
            open_files: open_files.map(Into::into),
        }
    }
}

/// An open-file limit, soft and hard.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenFiles {
    pub soft: u64,
    pub hard: u64,
}

impl From<OpenFileLimit> for OpenFiles {
    fn from(l: OpenFileLimit) -> Self {
        OpenFiles {
            soft: l.soft,
            hard: l.hard,
        }
    }
}
