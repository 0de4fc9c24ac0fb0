//! End-to-end tests: the mock on an ephemeral loopback port, driven by real clients and by
//! loadgen; loadgen against servers that misbehave on purpose.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod auth;
mod behaviour;
mod capacity;
mod chat;
mod compare;
mod docs;
mod embeddings;
mod errors;
mod failures;
mod faults;
mod framing;
mod hostile;
mod http1;
mod http2;
mod k8s;
mod latency;
mod levels;
mod lifecycle;
mod load;
mod memory;
mod messages;
mod mock_control;
mod omission;
mod overhead;
mod pacing;
mod packaging;
mod prefill;
mod presets;
mod profiling;
mod prompt_cache;
mod ratelimit;
mod responses;
mod schema;
mod sdk;
mod secure;
mod selftest;
mod sessions;
mod stream;
mod tool_rounds;
mod transport;
mod twin;
mod workloads;
