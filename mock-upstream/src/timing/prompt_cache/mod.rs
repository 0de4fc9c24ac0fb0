//! `--prompt-cache on`: a deterministic prompt cache, one for every worker thread, scoped per
//! API key (and per API and model), that reports what each request read and wrote exactly
//! where its API does.
//!
//! - `prompt`: a request's prompt as parts of canonical text, with their tokens and
//!   breakpoints.
//! - `rules`: each provider's rule (automatic steps, explicit breakpoints), the prefix hashes.
//! - `store`: the entries, their TTLs and the size bound.
//! - `report`: the cache's figures written into an answer's usage.
//!
//! Off (the default), none of this runs: answers are the pre-encoded bytes.

mod prompt;
mod report;
mod rules;
mod store;

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use report::report;
pub use rules::CacheUsage;

use crate::config::{Api, PromptCacheSettings};
use crate::timing::tokens::Counter;

/// The cache of one server.
#[derive(Debug)]
pub struct PromptCache {
    store: Mutex<store::Store>,
    ttl: Duration,
    counts: Counts,
}

/// What the cache has served, for `/metrics`.
#[derive(Debug, Default)]
struct Counts {
    /// Requests that read some of their prompt from the cache, and those that read none.
    hits: AtomicU64,
    misses: AtomicU64,
    /// Prompt tokens looked up, read and written.
    queried_tokens: AtomicU64,
    read_tokens: AtomicU64,
    written_tokens: AtomicU64,
}

impl PromptCache {
    /// The cache of `settings`; `None` when it is off.
    pub fn new(settings: &PromptCacheSettings) -> Option<PromptCache> {
        settings.on.then(|| PromptCache {
            store: Mutex::new(store::Store::new(settings.entries)),
            ttl: settings.ttl,
            counts: Counts::default(),
        })
    }

    /// Looks a request's prompt up and leaves its entries: what it read and wrote. `key` is
    /// the request's API key (`""` for none), `model` as the request names it.
    pub fn serve(
        &self,
        api: Api,
        key: &str,
        model: &str,
        body: &[u8],
        prompt_tokens: u64,
        counter: Option<&Counter>,
    ) -> CacheUsage {
        let parts = prompt::parts(api, body, counter);
        let rule = rules::Rule::of(api, model);
        let seed = rules::scope_seed(key, api, model);
        let prepared = rules::prepare(rule, &parts, prompt_tokens, seed);
        let usage = {
            let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
            prepared.apply(&mut store, Instant::now(), self.ttl)
        };
        let c = &self.counts;
        if usage.read > 0 { &c.hits } else { &c.misses }.fetch_add(1, Relaxed);
        c.queried_tokens.fetch_add(prompt_tokens, Relaxed);
        c.read_tokens.fetch_add(usage.read, Relaxed);
        c.written_tokens.fetch_add(usage.written(), Relaxed);
        usage
    }

    /// The cache's counters as Prometheus text, with vLLM's names for the token counts.
    pub fn to_prometheus(&self, out: &mut String) {
        let c = &self.counts;
        let mut counter = |name: &str, help: &str, value: &AtomicU64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                value.load(Relaxed)
            );
        };
        counter(
            "mock_prompt_cache_hits_total",
            "Requests that read part of their prompt from the prompt cache.",
            &c.hits,
        );
        counter(
            "mock_prompt_cache_misses_total",
            "Requests that read none of their prompt from the prompt cache.",
            &c.misses,
        );
        counter(
            "mock_prompt_cache_written_tokens_total",
            "Prompt tokens written to the prompt cache.",
            &c.written_tokens,
        );
        counter(
            "vllm:prefix_cache_queries",
            "Prompt tokens looked up in the prefix cache.",
            &c.queried_tokens,
        );
        counter(
            "vllm:prefix_cache_hits",
            "Prompt tokens read from the prefix cache.",
            &c.read_tokens,
        );
    }
}
