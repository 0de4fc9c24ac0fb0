//! `--rate-limit rpm=N,tpm=M`: a token bucket per API key, as providers keep one per key or
//! organisation, so a gateway's retries, back-off and key rotation meet a limit that really
//! runs down and refills.
//!
//! Each key has a request bucket and a token bucket, full at start, holding at most the
//! per-minute limit and refilled continuously at limit / 60 s. A request is admitted when one
//! request and its tokens (prompt plus output, charged on admission as OpenAI estimates them)
//! are in the buckets, and both are taken; otherwise it gets a 429 in the provider's shape with
//! the wait until it would fit, and nothing is taken. Every admitted answer carries the
//! buckets' state in the provider's rate-limit headers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::StatusCode;

use crate::config::Provider;
use crate::config::RateLimit;
use crate::rejection::Rejection;

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
    /// share, or refuses it with a 429 in `provider`'s shape; `None` when no limit is set.
    pub fn take(
        &self,
        key: &str,
        tokens: u64,
        provider: Provider,
    ) -> Option<Result<Quota, Rejection>> {
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
        let elapsed = now.saturating_duration_since(buckets.updated);
        buckets.updated = now;
        for bucket in [&mut buckets.requests, &mut buckets.tokens]
            .into_iter()
            .flatten()
        {
            bucket.refill(elapsed);
        }
        let wait_requests = buckets.requests.map_or(Duration::ZERO, |b| b.wait_for(1));
        let wait_tokens = buckets
            .tokens
            .map_or(Duration::ZERO, |b| b.wait_for(tokens));
        let levels = |b: &Buckets| Levels {
            requests: b.requests,
            tokens: b.tokens,
        };
        if let Some(bucket) = buckets.tokens.filter(|b| tokens > b.capacity) {
            let quota = Quota {
                levels: levels(buckets),
                provider,
            };
            return Some(Err(too_large(tokens, bucket.capacity, quota)));
        }
        if wait_requests > Duration::ZERO || wait_tokens > Duration::ZERO {
            let quota = Quota {
                levels: levels(buckets),
                provider,
            };
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
            return Some(Err(limited(
                which,
                limit.unwrap_or(0),
                requested,
                wait,
                quota,
            )));
        }
        if let Some(b) = buckets.requests.as_mut() {
            b.level -= 1.0;
        }
        if let Some(b) = buckets.tokens.as_mut() {
            b.level -= tokens as f64;
        }
        Some(Ok(Quota {
            levels: levels(buckets),
            provider,
        }))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Requests,
    Tokens,
}

fn limited(which: Which, limit: u64, requested: u64, wait: Duration, quota: Quota) -> Rejection {
    let wait_ms = wait.as_millis().max(1) as u64;
    let mut rejection = match quota.provider {
        Provider::OpenAi | Provider::Azure => {
            let (what, short, kind) = match which {
                Which::Requests => ("requests", "RPM", "requests"),
                Which::Tokens => ("tokens", "TPM", "tokens"),
            };
            Rejection::with_status(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "Rate limit reached for {what} per min ({short}): Limit {limit}, \
                     Requested {requested}. Please try again in {}.",
                    openai_duration(wait)
                ),
                kind,
                Some("rate_limit_exceeded"),
            )
        }
        Provider::Anthropic => {
            let what = match which {
                Which::Requests => "requests",
                Which::Tokens => "tokens",
            };
            Rejection::with_status(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Number of {what} has exceeded your per-minute rate limit."),
                "rate_limit_error",
                None,
            )
            .anthropic()
        }
        Provider::Gemini => Rejection::with_status(
            StatusCode::TOO_MANY_REQUESTS,
            "Resource has been exhausted (e.g. check quota).",
            "",
            None,
        )
        .gemini(),
        Provider::Bedrock => Rejection::with_status(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests, please wait before trying again.",
            "",
            None,
        )
        .bedrock(),
    };
    rejection.extra_headers = Some(Box::new(quota.headers()));
    let retry_after = wait_ms.div_ceil(1000).to_string();
    rejection.set_header("retry-after", &retry_after);
    if quota.provider != Provider::Anthropic {
        rejection.set_header("retry-after-ms", &wait_ms.to_string());
    }
    rejection.set_header("x-should-retry", "true");
    rejection
}

fn too_large(tokens: u64, capacity: u64, quota: Quota) -> Rejection {
    let message = format!(
        "Request too large: Limit {capacity} tokens per min, Requested {tokens}. The input or \
         output tokens must be reduced in order to run successfully."
    );
    let mut rejection = match quota.provider {
        Provider::OpenAi | Provider::Azure => Rejection::with_status(
            StatusCode::TOO_MANY_REQUESTS,
            message,
            "tokens",
            Some("rate_limit_exceeded"),
        ),
        Provider::Anthropic => Rejection::with_status(
            StatusCode::TOO_MANY_REQUESTS,
            message,
            "rate_limit_error",
            None,
        )
        .anthropic(),
        Provider::Gemini => {
            Rejection::with_status(StatusCode::TOO_MANY_REQUESTS, message, "", None).gemini()
        }
        Provider::Bedrock => {
            Rejection::with_status(StatusCode::TOO_MANY_REQUESTS, message, "", None).bedrock()
        }
    };
    rejection.extra_headers = Some(Box::new(quota.headers()));
    // Waiting does not help.
    rejection.set_header("x-should-retry", "false");
    rejection
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

/// A duration as OpenAI writes its reset headers: `20ms`, `1.5s`, `6m0s`.
fn openai_duration(d: Duration) -> String {
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
    fn a_key_runs_down_and_others_are_apart() {
        let limiter = Limiter::new(RateLimit::parse("rpm=3,tpm=100").unwrap());
        for _ in 0..3 {
            assert!(limiter.take("a", 10, Provider::OpenAi).unwrap().is_ok());
        }
        let refused = limiter
            .take("a", 10, Provider::OpenAi)
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.code, Some("rate_limit_exceeded"));
        assert_eq!(refused.kind, "requests");
        // One request refills every 20 s at 3 per minute.
        let wait: u64 = refused.header("retry-after-ms").unwrap().parse().unwrap();
        assert!((19_000..=20_000).contains(&wait), "{wait}");
        assert_eq!(refused.header("retry-after"), Some("20"));
        assert_eq!(refused.header("x-ratelimit-remaining-requests"), Some("0"));
        assert_eq!(refused.header("x-ratelimit-remaining-tokens"), Some("70"));
        // Another key has its own buckets.
        let quota = limiter.take("b", 95, Provider::OpenAi).unwrap().unwrap();
        let headers = quota.headers();
        assert_eq!(headers["x-ratelimit-remaining-requests"], "2");
        assert_eq!(headers["x-ratelimit-remaining-tokens"], "5");
        // Tokens refuse before requests run out.
        let refused = limiter
            .take("b", 20, Provider::Anthropic)
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.kind, "rate_limit_error");
        assert_eq!(
            refused.header("anthropic-ratelimit-tokens-remaining"),
            Some("5")
        );
        assert!(refused.header("retry-after").is_some());
        // More than a minute's tokens can never fit.
        let refused = limiter
            .take("c", 101, Provider::OpenAi)
            .unwrap()
            .unwrap_err();
        assert_eq!(refused.header("x-should-retry"), Some("false"));
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
