//! What every worker thread shares: the configuration, the catalog, the counters, the record
//! of arrivals and the steered state.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::observability::metrics::Metrics;
use crate::ratelimit::Limiter;
use crate::timing::tokens::Counter;

/// The shared state of one server.
#[derive(Debug)]
pub struct State {
    pub config: Config,
    pub catalog: Catalog,
    pub metrics: Metrics,
    /// The configuration as TOML, served at `GET /v1/gatebench/config`.
    pub config_toml: bytes::Bytes,
    /// True when the latency model ever waits, so requests need their arrival time.
    pub timed: bool,
    /// The token buckets of `--rate-limit`.
    pub limiter: Limiter,
    /// The BPE of `--tokenizer`; `None` for the estimate.
    pub tokens: Option<Counter>,
    /// The prompt cache of `--prompt-cache on`; `None` when off.
    pub prompt_cache: Option<crate::timing::prompt_cache::PromptCache>,
    /// The prefill model and running bound; `None` when off.
    pub prefill: Option<crate::timing::prefill::Prefill>,
    /// `x-gatebench-upstream` of every answer (`--name`), encoded once.
    pub upstream: Option<hyper::header::HeaderValue>,
    /// The last arrivals (`--record N`); `None` when off.
    pub recorder: Option<crate::observability::record::Recorder>,
    /// What the control listener steers (`--control`); nothing steered without it.
    pub control: std::sync::Arc<crate::control::Control>,
    /// Ordinal of the next request that carries no `x-gatebench-seq`.
    next_ordinal: AtomicU64,
}

impl State {
    /// Encodes the catalog for `config`.
    pub fn new(config: Config) -> State {
        State {
            catalog: Catalog::build(&config),
            timed: crate::timing::latency::waits(&config),
            limiter: Limiter::new(config.rate_limit),
            tokens: Counter::new(config.tokenizer),
            prompt_cache: crate::timing::prompt_cache::PromptCache::new(&config.prompt_cache),
            prefill: crate::timing::prefill::Prefill::new(&config.prefill),
            config_toml: config.to_toml_redacted().into(),
            // Invariant: `--name` is validated as visible ASCII, a valid header value.
            upstream: config.name.as_deref().map(|name| {
                hyper::header::HeaderValue::from_str(name).expect("--name is a header value")
            }),
            recorder: crate::observability::record::Recorder::new(
                config.record,
                gatebench_shared::clock::monotonic_ns(),
            ),
            control: std::sync::Arc::default(),
            config,
            metrics: Metrics::default(),
            next_ordinal: AtomicU64::new(0),
        }
    }

    /// The ordinal for a request without `x-gatebench-seq`: requests in arrival order.
    pub fn next_ordinal(&self) -> u64 {
        self.next_ordinal.fetch_add(1, Relaxed)
    }
}
