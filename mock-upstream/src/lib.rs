//! A deterministic mock LLM provider that is never the bottleneck of a benchmark.
//!
//! Start-up encodes every response into a [`catalog`](catalog::Catalog); a request then costs a
//! route match, a scan of a few JSON fields, a seeded latency draw and `Bytes` clones.
//!
//! - `config`: flags, `MOCK_*` variables and TOML into one validated [`Config`].
//! - `server` / `connection`: worker threads, `SO_REUSEPORT` listeners, hyper connections,
//!   graceful shutdown.
//! - `router` / `handler` / `request` / `rejection`: routing, answering, body reading, errors in
//!   OpenAI's shape.
//! - `catalog` / `template` / `payload`: pre-encoded responses and their zero-allocation filling.
//! - `sse` / `body`: the streamed body on absolute deadlines, and the one body type.
//! - `timer`: each worker's kernel timer (timerfd) that every delayed answer and event waits on.
//! - `metrics`: lock-free counters and the mock's own emission error, as Prometheus text.

mod auth;
mod body;
mod catalog;
mod cli;
mod completions;
mod config;
mod connection;
mod embeddings;
mod faults;
mod h1;
mod handler;
mod healthcheck;
mod inbound;
mod messages;
mod metrics;
mod payload;
mod ratelimit;
mod rejection;
mod request;
mod responses;
mod router;
mod server;
mod sse;
mod state;
mod template;
mod timer;
mod tls;
mod tools;

pub use catalog::{COMPLETION_ID, CREATED, REQUEST_ID, SYSTEM_FINGERPRINT};
pub use cli::{run, Cli, Subcommand};
pub use config::{Api, FaultKind, FaultRates, StreamFault, StreamFaultKind};
pub use config::{Config, ConfigError, Http1Server, RawSettings};
pub use metrics::{AtomicHistogram, Metrics, RouteKind};
pub use server::{MockServer, StartError};
