//! A deterministic mock LLM provider that is never the bottleneck of a benchmark.
//!
//! Start-up encodes every response into a [`catalog`](catalog::Catalog); a request then costs a
//! route match, a scan of a few JSON fields, a seeded latency draw and `Bytes` clones.
//!
//! The crate is in families, one folder each, top to bottom (each imports only from those below
//! it; `tests/tests/layers.rs` holds the order, `MOCK_LAYERS`):
//!
//! - `cli`: the command line.
//! - `serving`: worker threads and `SO_REUSEPORT` listeners (`server`), a connection to the
//!   own HTTP/1.1 server or to hyper for HTTP/2, TLS and hand-offs (`connection`, `h1`, `tls`),
//!   answering a route (`handler`), the control listener, and the stamp every answer carries
//!   (`--name`, the echoed `x-gatebench-seq`).
//! - `api`: the one pipeline every API request takes, and the APIs as its data (`chat`,
//!   `completions`, `responses`, `messages`, `embeddings`, `gemini`, `bedrock`; `azure`, the
//!   check Azure OpenAI's endpoints add; `context`, the context-window refusal).
//! - `admission`: what a request passes before it is answered: its route (`router`), its
//!   receipt (`inbound`: seq, key, `x-mock-*` headers, body, the rate limiter's refusals
//!   answered; `request`), `auth`, faults and the `x-mock-*` headers read (`faults`;
//!   `timing::latency` applies their latency changes), and a refusal and its body in every
//!   provider's shape (`rejection`, `error_body`).
//! - `answer`: the one body type (`body`), the stream on absolute deadlines (`sse`), tool-call
//!   answers built per request (`tools`), and the watch that frees a stalled stream when its
//!   client leaves (`peer`).
//! - `state`: what every request shares; `ratelimit`: the rate limiter's buckets and decisions
//!   (plain data); `control`: `--control`'s steered state.
//! - `catalog`: pre-encoded responses (`template`s filled without allocating into a `payload`).
//! - `observability`: lock-free counters and the mock's own emission error as Prometheus text
//!   (`metrics`), `--record N`'s ring of the last arrivals (`record`), the container health
//!   probe (`healthcheck`).
//! - `timing`: a request's latency, composed and drawn in one place (`latency`); each
//!   worker's kernel timer (timerfd) that every delayed answer and event waits on, woken a
//!   margin early and spinning the rest (`timer`); the prefill model and the bound
//!   on running requests (`prefill`); the per-key prompt cache (`prompt_cache`); the prompt's
//!   token count by `--tokenizer` (`tokens`).
//! - `config`: settings types only (flags, `MOCK_*` variables and TOML into one validated
//!   [`Config`]; the APIs and providers; `--fault`, `--rate-limit`, `--context-window` and
//!   `--tokenizer` settings).

mod admission;
mod answer;
mod api;
mod catalog;
mod cli;
mod config;
mod control;
mod observability;
mod ratelimit;
mod serving;
mod state;
mod timing;

pub use catalog::{COMPLETION_ID, CREATED, REQUEST_ID, SYSTEM_FINGERPRINT};
pub use cli::{former_environment, run, Cli, Subcommand};
pub use config::{Api, FaultKind, FaultRates, StreamFault, StreamFaultKind};
pub use config::{Config, ConfigError, Http1Server, RawSettings, Tokenizer};
pub use observability::metrics::{AtomicHistogram, Metrics, RouteKind};
pub use serving::server::{MockServer, StartError};
