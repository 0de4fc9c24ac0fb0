//! Wire formats both sides must agree on, one file per provider API.

pub mod anthropic;
pub mod completions;
pub mod embeddings;
pub mod openai;
pub mod responses;

/// Header carrying a request's schedule index. The mock draws that request's latency from it,
/// so the same request sent direct and through a gateway waits exactly as long.
pub const SEQ_HEADER: &str = "x-gatebench-seq";
