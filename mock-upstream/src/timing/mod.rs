//! Timing: one request's latency draw, each worker's kernel timer, the prefill model and the
//! bound on running requests, the prompt cache, the prompt's token count.

pub(crate) mod latency;
pub(crate) mod prefill;
pub(crate) mod prompt_cache;
pub(crate) mod timer;
pub(crate) mod tokens;
