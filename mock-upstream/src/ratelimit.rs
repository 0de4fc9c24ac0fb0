//! `--rate-limit rpm=N,tpm=M`: a token bucket per API key, as providers keep one per key or
//! organisation, so a gateway's retries, back-off and key rotation meet a limit that really
//! runs down and refills.
//!
//! Each key has a request bucket and a token bucket, full at start, holding at most the
//! per-minute limit and refilled continuously at limit / 60 s. A request is admitted when one
//! request and its tokens (prompt plus output, charged on admission as OpenAI estimates them)
//! are in the buckets, and both are taken; otherwise it is refused with the wait until it would
//! fit, and nothing is taken. A refusal is data ([`Refusal`]): the pipeline answers it with a
//! 429 in the provider's shape (`crate::admission::inbound`). Every answer carries the buckets' state in the
//! provider's rate-limit headers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use hyper::header::{HeaderMap, HeaderName, HeaderValue};

use crate::config::Provider;
use crate::config::RateLimit;

/// A bucket's level, refilled continuously up to its capacity.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    capacity: u64,
    level: f64,
}

impl Bucket {
    fn full(capacity: u64) -> Bucket {
        Bucket {
            capacity,
            level: capacity as f64,
        }
    }

    fn refill(&mut self, elapsed: Duration) {
        let per_second = self.capacity as f64 / 60.0;
        self.level = (self.level + elapsed.as_secs_f64() * per_second).min(self.capacity as f64);
    }

    /// Time until `amount` is in the bucket.
    fn wait_for(&self, amount: u64) -> Duration {
        let missing = amount as f64 - self.level;
        if missing <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(missing * 60.0 / self.capacity as f64)
    }

    /// Time until the bucket is full again.
    fn until_full(&self) -> Duration {
        self.wait_for(self.capacity)
    }
}

#[derive(Debug, Clone, Copy)]
struct Buckets {
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
    updated: Instant,
}

/// What the buckets of one key held after a decision.
#[derive(Debug, Clone, Copy)]
struct Levels {
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
}

/// A request's standing against its key's limits.
#[derive(Debug, Clone, Copy)]
pub struct Quota {
    levels: Levels,
    provider: Provider,
}

/// A request the limiter refused: which limit, and the levels its answer reports.
#[derive(Debug, Clone, Copy)]
pub struct Refusal {
    pub exceeded: Exceeded,
    pub quota: Quota,
}

/// The limit a refused request ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// The bucket of `which`, of `limit` per minute, holds less than the `requested` request
    /// (1) or tokens; they are in it after `wait`.
    Rate {
        which: Which,
        limit: u64,
        requested: u64,
        wait: Duration,
    },
    /// More tokens than a minute's `capacity`: the request never fits, and waiting does not
    /// help.
    TooLarge { tokens: u64, capacity: u64 },
}

/// Which of a key's buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Requests,
    Tokens,
}

/// The buckets of every key seen.
#[derive(Debug, Default)]
pub struct Limiter {
    limit: RateLimit,
    keys: Mutex<HashMap<Box<str>, Buckets>>,
}

impl Limiter {
    pub fn new(limit: RateLimit) -> Limiter {
        Limiter {
            limit,
            keys: Mutex::default(),
        }
    }

    /// Admits a request of `tokens` tokens for `key` (`""` when it carries none) and takes its
    /// share, or refuses it (taking nothing); `None` when no limit is set. `provider` names the
    /// rate-limit headers the levels are reported in.
    pub fn take(
        &self,
        key: &str,
        tokens: u64,
        provider: Provider,
    ) -> Option<Result<Quota, Refusal>> {
        if !self.limit.is_set() {
            return None;
        }
        let now = Instant::now();
        // A poisoned lock only means another request panicked mid-update; the levels are
        // still numbers.
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let buckets = keys.entry(key.into()).or_insert_with(|| Buckets {
            requests: self.limit.requests_per_minute.map(Bucket::full),
            tokens: self.limit.tokens_per_minute.map(Bucket::full),
            updated: now,
        });
        buckets.refill(now);
        let wait_requests = buckets.requests.map_or(Duration::ZERO, |b| b.wait_for(1));
        let wait_tokens = buckets
            .tokens
            .map_or(Duration::ZERO, |b| b.wait_for(tokens));
        let quota = |b: &Buckets| Quota {
            levels: b.levels(),
            provider,
        };
        if let Some(bucket) = buckets.tokens.filter(|b| tokens > b.capacity) {
            let exceeded = Exceeded::TooLarge {
                tokens,
                capacity: bucket.capacity,
            };
            return Some(Err(Refusal {
                exceeded,
                quota: quota(buckets),
            }));
        }
        if wait_requests > Duration::ZERO || wait_tokens > Duration::ZERO {
            let exceeded = self.rate_exceeded(tokens, wait_requests, wait_tokens);
            return Some(Err(Refusal {
                exceeded,
                quota: quota(buckets),
            }));
        }
        buckets.take(tokens);
        Some(Ok(quota(buckets)))
    }

    /// The limit a request of `tokens` ran into, given the waits until one request and its
    /// tokens are in their buckets: the one with the longer wait.
    fn rate_exceeded(
        &self,
        tokens: u64,
        wait_requests: Duration,
        wait_tokens: Duration,
    ) -> Exceeded {
        let (which, limit, wait) = if wait_requests >= wait_tokens {
            (
                Which::Requests,
                self.limit.requests_per_minute,
                wait_requests,
            )
        } else {
            (Which::Tokens, self.limit.tokens_per_minute, wait_tokens)
        };
        let requested = match which {
            Which::Requests => 1,
            Which::Tokens => tokens,
        };
        Exceeded::Rate {
            which,
            limit: limit.unwrap_or(0),
            requested,
            wait,
        }
    }
}

impl Buckets {
    /// Refills both buckets for the time since they were last updated, `now`.
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated);
        self.updated = now;
        for bucket in [&mut self.requests, &mut self.tokens].into_iter().flatten() {
            bucket.refill(elapsed);
        }
    }

    /// Takes one request and its `tokens`.
    fn take(&mut self, tokens: u64) {
        if let Some(b) = self.requests.as_mut() {
            b.level -= 1.0;
        }
        if let Some(b) = self.tokens.as_mut() {
            b.level -= tokens as f64;
        }
    }

    fn levels(&self) -> Levels {
        Levels {
            requests: self.requests,
            tokens: self.tokens,
        }
    }
}

impl Quota {
    /// The provider's rate-limit headers for these levels.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let mut set = |name: String, value: String| {
            if let (Ok(name), Ok(value)) =
                (HeaderName::try_from(name), HeaderValue::try_from(value))
            {
                headers.insert(name, value);
            }
        };
        let now = SystemTime::now();
        for (what, bucket) in [
            ("requests", self.levels.requests),
            ("tokens", self.levels.tokens),
        ] {
            let Some(bucket) = bucket else { continue };
            let remaining = bucket.level.max(0.0).floor() as u64;
            match self.provider {
                Provider::OpenAi | Provider::Azure => {
                    set(
                        format!("x-ratelimit-limit-{what}"),
                        bucket.capacity.to_string(),
                    );
                    set(
                        format!("x-ratelimit-remaining-{what}"),
                        remaining.to_string(),
                    );
                    set(
                        format!("x-ratelimit-reset-{what}"),
                        openai_duration(bucket.until_full()),
                    );
                }
                Provider::Anthropic => {
                    set(
                        format!("anthropic-ratelimit-{what}-limit"),
                        bucket.capacity.to_string(),
                    );
                    set(
                        format!("anthropic-ratelimit-{what}-remaining"),
                        remaining.to_string(),
                    );
                    let full = now + bucket.until_full();
                    set(
                        format!("anthropic-ratelimit-{what}-reset"),
                        humantime::format_rfc3339_seconds(full).to_string(),
                    );
                }
                // Google and AWS send no rate-limit headers.
                Provider::Gemini | Provider::Bedrock => {}
            }
        }
        headers
    }

    /// Puts these levels' headers on an admitted answer, replacing the catalog's fixed ones.
    pub fn stamp(&self, headers: &mut HeaderMap) {
        for (name, value) in self.headers() {
            if let Some(name) = name {
                headers.insert(name, value);
            }
        }
    }
}

/// A duration as OpenAI writes its reset headers and its 429 messages: `20ms`, `1.5s`, `6m0s`.
pub fn openai_duration(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    if ms < 1_000 {
        format!("{}ms", ms.max(1))
    } else if ms < 60_000 {
        let s = format!("{:.3}", d.as_secs_f64());
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_limit_and_takes_nothing() {
        let limiter = Limiter::new(RateLimit::parse("rpm=1,tpm=100").unwrap());
        assert!(limiter.take("a", 10, Provider::OpenAi).unwrap().is_ok());
        let refusal = limiter
            .take("a", 10, Provider::OpenAi)
            .unwrap()
            .unwrap_err();
        let Exceeded::Rate {
            which,
            limit,
            requested,
            wait,
        } = refusal.exceeded
        else {
            panic!("{refusal:?}");
        };
        assert_eq!((which, limit, requested), (Which::Requests, 1, 1));
        assert!(wait > Duration::from_secs(59), "{wait:?}");
        assert_eq!(
            refusal.quota.headers()["x-ratelimit-remaining-tokens"],
            "90"
        );
        let refusal = limiter
            .take("b", 101, Provider::OpenAi)
            .unwrap()
            .unwrap_err();
        assert_eq!(
            refusal.exceeded,
            Exceeded::TooLarge {
                tokens: 101,
                capacity: 100
            }
        );
        assert_eq!(
            refusal.quota.headers()["x-ratelimit-remaining-requests"],
            "1"
        );
    }

    #[test]
    fn buckets_refill_at_the_limit_per_minute() {
        let mut bucket = Bucket::full(600);
        bucket.level = 0.0;
        bucket.refill(Duration::from_millis(500));
        assert!((bucket.level - 5.0).abs() < 1e-9);
        assert_eq!(bucket.wait_for(6), Duration::from_millis(100));
        bucket.refill(Duration::from_secs(3600));
        assert_eq!(bucket.level, 600.0);
        assert_eq!(openai_duration(Duration::from_millis(20)), "20ms");
        assert_eq!(openai_duration(Duration::from_millis(1_500)), "1.5s");
        assert_eq!(openai_duration(Duration::from_secs(360)), "6m0s");
    }

    #[test]
    fn no_limit_admits_without_a_lock() {
        assert!(Limiter::new(RateLimit::default())
            .take("a", 1, Provider::OpenAi)
            .is_none());
    }
}
