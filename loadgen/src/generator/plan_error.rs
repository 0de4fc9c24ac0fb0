//! What a plan can be refused for: [`PlanError`], one variant per kind of bad option, each
//! message naming the expected form.

/// An option the load generator cannot use. Each message says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("invalid rate '{0}': expected a number of requests per second with an optional k suffix, like 5000 or 5k")]
    Rate(String),
    #[error("invalid --arrival '{0}': expected constant or poisson")]
    Arrival(String),
    #[error("--rate and --concurrency exclude each other: give a rate (open loop) or a concurrency (closed loop)")]
    RateAndConcurrency,
    #[error("--requests needs --concurrency (at a rate, the duration sets the count: rate x duration) and excludes --duration")]
    Requests,
    #[error("invalid {0} '{1}': expected a duration like 10s, 500ms or 2m{2}")]
    Duration(&'static str, String, &'static str),
    #[error("invalid {0} {1}: expected a whole number from 1 to {2}")]
    Count(&'static str, usize, usize),
    #[error("invalid {0} {1}: expected a whole number from {2} to {3}")]
    Range(&'static str, usize, usize, usize),
    #[error("missing {0}")]
    Missing(&'static str),
    #[error("invalid {0} '{1}': expected {2}")]
    Named(&'static str, String, &'static str),
    #[error(
        "invalid --cores '{0}': expected core ids like 1 or 0-1, each below the {1} cores here"
    )]
    Cores(String, usize),
    #[error(transparent)]
    Spec(#[from] crate::wire::target::SpecError),
    #[error(transparent)]
    ConnectTo(#[from] crate::wire::connect_to::ConnectToError),
    #[error(transparent)]
    Tls(#[from] crate::wire::transport::TlsSetupError),
    #[error(
        "invalid --shard '{0}': expected I/N with 0 <= I < N <= 10000, like 2/4 (indexes from 0), or slot:S/N with 1 <= S <= N (Docker Swarm's task slot)"
    )]
    Shard(String),
    #[error("--shard splits an open-loop schedule; a closed loop (--concurrency) has none: give each host its own --concurrency instead")]
    ShardClosed,
    #[error("--shard cannot take --upstream-metrics: the upstream also counts the other shards' requests; compare its count with the merged result instead")]
    ShardUpstream,
    #[error(
        "invalid --start-at '{0}': expected an RFC 3339 instant in UTC, like 2026-11-30T08:00:00Z"
    )]
    StartAt(String),
    #[error("invalid --max-error-rate {0}: expected a fraction from 0 to 1, like 0.01")]
    ErrorRate(f64),
    #[error(
        "invalid --max-pending 0: expected the most requests held waiting at once, at least 1"
    )]
    MaxPending,
    #[error("cannot use {0} {1}: {2}")]
    File(&'static str, String, String),
    #[error("{0} excludes {1}: {2}")]
    Excludes(&'static str, &'static str, &'static str),
    #[error("{0} needs {1}")]
    Needs(&'static str, &'static str),
    /// A sessions file's line that cannot be used: where, which field, and why.
    #[error("cannot use --sessions {file}: line {line}{}: {reason}", field_part(.field))]
    SessionLine {
        file: String,
        line: usize,
        /// The field at fault, as a path like `turns[2].text`; empty for the whole line.
        field: String,
        reason: String,
    },
}

/// `, field F` when a field is named.
fn field_part(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!(", field {field}")
    }
}
