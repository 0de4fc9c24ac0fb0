//! A deterministic mock LLM provider that is never the bottleneck of a benchmark.
//!
//! Start-up encodes every response into a [`catalog`](catalog::Catalog); a request then costs a
//! route match, a scan of a few JSON fields, a seeded latency draw and `Bytes` clones.
//!
//! - `config`: settings types only (flags, `MOCK_*` variables and TOML into one validated
//!   [`Config`]; the APIs and providers; `--fault`, `--rate-limit`, `--context-window` and
//!   `--tokenizer` settings).
//! - `cli` / `server` / `connection` / `h1` / `tls`: the command line, worker threads,
//!   `SO_REUSEPORT` listeners, the own HTTP/1.1 server (with hyper for HTTP/2, TLS and what the
//!   own server hands off), graceful shutdown.
//! - `router` / `handler`: method and path to a route; answering it.
//! - `api`: the one pipeline every API request takes, and the APIs as its data (`chat`,
//!   `completions`, `responses`, `messages`, `embeddings`, `gemini`, `bedrock`; `azure`, the
//!   check Azure OpenAI's endpoints add; `context`, the context-window refusal).
//! - `inbound` / `request` / `auth` / `faults` / `ratelimit`: receipt (seq, key, `x-mock-*`
//!   headers, body, the rate limiter's refusals answered), faults and latency overrides, the
//!   rate limiter's buckets and decisions (plain data).
//! - `rejection` / `error_body`: an error and its response; every provider's error body shape,
//!   and its words for faults and rate limits.
//! - `catalog` / `template` / `payload` / `tools` / `tokens`: pre-encoded responses, their
//!   zero-allocation filling, tool-call answers built per request, and the prompt's token count
//!   by `--tokenizer`.
//! - `sse` / `body` / `peer`: the streamed body on absolute deadlines, the one body type, and
//!   the watch that frees a stalled stream when its client leaves.
//! - `timer`: each worker's kernel timer (timerfd) that every delayed answer and event waits on,
//!   woken a margin early (learned by default, `--spin auto`) and spinning the rest.
//! - `prompt_cache` / `prefill`: `--prompt-cache on`, the per-key prefix cache reported where
//!   each API reports it; the prefill model and the bound on running requests with its queue.
//! - `metrics` / `state` / `healthcheck`: lock-free counters and the mock's own emission error
//!   as Prometheus text, what every request shares, and the container health probe.
//! - `stamp` / `record` / `control`: `--name` and the echoed `x-gatebench-seq` on every answer;
//!   `--record N`, the ring of the last arrivals; `--control ADDR`, the steered state and
//!   (`control_listener`) the loopback listener that steers faults, latency and refusals
//!   during a run.

mod api;
mod auth;
mod body;
mod catalog;
mod cli;
mod config;
mod connection;
mod control;
mod control_listener;
mod error_body;
mod faults;
mod h1;
mod handler;
mod healthcheck;
mod inbound;
mod metrics;
mod payload;
mod peer;
mod prefill;
mod prompt_cache;
mod ratelimit;
mod record;
mod rejection;
mod request;
mod router;
mod server;
mod sse;
mod stamp;
mod state;
mod template;
mod timer;
mod tls;
mod tokens;
mod tools;

pub use catalog::{COMPLETION_ID, CREATED, REQUEST_ID, SYSTEM_FINGERPRINT};
pub use cli::{former_environment, run, Cli, Subcommand};
pub use config::{Api, FaultKind, FaultRates, StreamFault, StreamFaultKind};
pub use config::{Config, ConfigError, Http1Server, RawSettings, Tokenizer};
pub use metrics::{AtomicHistogram, Metrics, RouteKind};
pub use server::{MockServer, StartError};
