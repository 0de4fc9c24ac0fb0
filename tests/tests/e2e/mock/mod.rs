//! The mock judged from outside: its wire formats, streams, errors, faults, latency, limits and
//! lifecycle, by clients nobody here wrote (the SDKs, hyper's client) and by clients that
//! misbehave on purpose.

mod auth;
mod chat;
mod embeddings;
mod errors;
mod faults;
mod hostile;
mod http1;
mod http2;
mod latency;
mod lifecycle;
mod messages;
mod mock_control;
mod prefill;
mod prompt_cache;
mod ratelimit;
mod responses;
mod sdk;
mod stream;
mod transport;
