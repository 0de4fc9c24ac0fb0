//! Each provider's caching rule, applied to a prompt's parts: what it reads from the cache,
//! what it writes, and the entries it leaves.
//!
//! - Automatic (OpenAI's chat, Responses and Azure; Gemini's implicit cache): a prompt of at
//!   least the minimum caches its prefix in steps (OpenAI: 1,024 tokens, then every 128); a
//!   hit is the longest step seen before.
//! - Explicit (Anthropic's `cache_control`, Bedrock's `cachePoint`): each breakpoint whose
//!   prefix reaches the model's minimum writes that prefix; a hit is the longest part end,
//!   from a breakpoint back up to 20 parts, written before.

use std::time::{Duration, Instant};

use super::prompt::{Part, Ttl};
use super::store::Store;
use crate::config::Api;

/// Parts a breakpoint looks back over for an earlier entry (Anthropic's 20 blocks).
const LOOKBACK: usize = 20;
/// An explicit breakpoint's lives.
const FIVE_MINUTES: Duration = Duration::from_secs(300);
const ONE_HOUR: Duration = Duration::from_secs(3600);

/// What a request read from and wrote to the cache, in prompt tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUsage {
    pub read: u64,
    /// Written with a 5-minute life (all of an automatic cache's writes).
    pub write_5m: u64,
    /// Written with `"ttl":"1h"`.
    pub write_1h: u64,
}

impl CacheUsage {
    pub fn written(&self) -> u64 {
        self.write_5m + self.write_1h
    }
}

/// How a provider caches a model's prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Automatic { minimum: u64, step: u64 },
    Explicit { minimum: u64 },
}

impl Rule {
    /// The rule of `api` for `model` (the model as the request names it).
    pub fn of(api: Api, model: &str) -> Rule {
        let model = model.to_ascii_lowercase();
        match api {
            Api::Messages | Api::Bedrock => Rule::Explicit {
                minimum: claude_minimum(&model),
            },
            Api::Gemini => Rule::Automatic {
                minimum: gemini_minimum(&model),
                step: 128,
            },
            _ => Rule::Automatic {
                minimum: 1024,
                step: 128,
            },
        }
    }
}

/// Anthropic's shortest cacheable prompt: 4,096 tokens for Opus 4.5/4.6 and Haiku 4.5, 2,048
/// for the older Haiku models, 1,024 for the rest (Sonnet, Opus 4 and 4.1; Bedrock's other
/// models too).
fn claude_minimum(model: &str) -> u64 {
    if ["opus-4-5", "opus-4-6", "haiku-4-5"]
        .iter()
        .any(|m| model.contains(m))
    {
        4096
    } else if model.contains("haiku") {
        2048
    } else {
        1024
    }
}

/// Gemini's implicit cache minimum: 4,096 tokens for Pro models, 2,048 for Flash-Lite, 1,024
/// for Flash and the rest.
fn gemini_minimum(model: &str) -> u64 {
    if model.contains("pro") {
        4096
    } else if model.contains("flash-lite") {
        2048
    } else {
        1024
    }
}

/// A prompt's parts laid end to end: where each ends, in tokens.
struct Laid<'a> {
    parts: &'a [Part],
    /// Tokens up to the end of each part, as the parts count them.
    ends: Vec<u64>,
    /// The prompt's tokens as the request's usage reports them: no count above it.
    cap: u64,
    seed: u64,
}

impl<'a> Laid<'a> {
    fn new(parts: &'a [Part], prompt_tokens: u64, seed: u64) -> Laid<'a> {
        let mut sum = 0u64;
        let ends = parts
            .iter()
            .map(|p| {
                sum += p.tokens;
                sum
            })
            .collect();
        Laid {
            parts,
            ends,
            cap: prompt_tokens,
            seed,
        }
    }

    fn total(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0).min(self.cap)
    }

    /// The hashes of the prefixes of `positions` tokens (ascending), in one pass: whole parts,
    /// then the share of the next part's bytes its tokens take, then the count itself.
    fn hashes(&self, positions: &[u64]) -> Vec<u64> {
        let mut out = Vec::with_capacity(positions.len());
        let mut h = Fnv(self.seed);
        let (mut part, mut before, mut fed) = (0, 0u64, 0usize);
        for &tokens in positions {
            while part < self.parts.len() && self.ends[part] <= tokens {
                h.write(&self.parts[part].text[fed..]);
                h.write(&[0x1e]);
                before = self.ends[part];
                part += 1;
                fed = 0;
            }
            let mut at = h;
            if let Some(p) = self.parts.get(part) {
                let span = (self.ends[part] - before).max(1);
                let bytes = (p.text.len() as u64 * (tokens - before) / span) as usize;
                h.write(&p.text[fed..bytes.max(fed)]);
                fed = bytes.max(fed);
                at = h;
            }
            at.write(&tokens.to_le_bytes());
            out.push(at.0);
        }
        out
    }
}

/// FNV-1a, 64 bits: the same hash for the same bytes on every run and machine.
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The seed of a scope's hashes: the key, the API and the model, so no two share entries.
pub fn scope_seed(key: &str, api: Api, model: &str) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for piece in [key, api.name(), model] {
        h.write(piece.as_bytes());
        h.write(&[0]);
    }
    h.0
}

/// A prompt's entries, hashed (outside the cache's lock), to look up and write.
#[derive(Debug)]
pub enum Prepared {
    /// Every step's (tokens, hash), ascending.
    Automatic(Vec<(u64, u64)>),
    /// Per breakpoint: its (tokens, hash, ttl) and the part ends it looks back over,
    /// longest first.
    Explicit(Vec<Breakpoint>),
}

#[derive(Debug)]
pub struct Breakpoint {
    end: (u64, u64),
    ttl: Ttl,
    lookback: Vec<(u64, u64)>,
}

/// The entries `rule` looks up and writes for a prompt of these parts.
pub fn prepare(rule: Rule, parts: &[Part], prompt_tokens: u64, seed: u64) -> Prepared {
    let laid = Laid::new(parts, prompt_tokens, seed);
    match rule {
        Rule::Automatic { minimum, step } => {
            let total = laid.total();
            let steps: Vec<u64> = (0..)
                .map(|k| minimum + k * step)
                .take_while(|t| *t <= total)
                .collect();
            let hashes = laid.hashes(&steps);
            Prepared::Automatic(steps.into_iter().zip(hashes).collect())
        }
        Rule::Explicit { minimum } => {
            let hashes = laid.hashes(&laid.ends);
            let capped = |j: usize| (laid.ends[j].min(laid.cap), hashes[j]);
            let marks = parts.iter().enumerate().filter_map(|(i, p)| {
                let ttl = p.mark?;
                (laid.ends[i] >= minimum).then(|| Breakpoint {
                    end: capped(i),
                    ttl,
                    lookback: (i.saturating_sub(LOOKBACK - 1)..=i)
                        .rev()
                        .filter(|j| laid.ends[*j] >= minimum)
                        .map(capped)
                        .collect(),
                })
            });
            Prepared::Explicit(marks.collect())
        }
    }
}

impl Prepared {
    /// Reads and writes the entries in `store`; `ttl` is an automatic entry's life.
    pub fn apply(&self, store: &mut Store, now: Instant, ttl: Duration) -> CacheUsage {
        match self {
            Prepared::Automatic(steps) => {
                let read = steps
                    .iter()
                    .rev()
                    .find(|(_, h)| store.hit(*h, now, ttl))
                    .map_or(0, |(t, _)| *t);
                for (_, h) in steps {
                    store.put(*h, now + ttl);
                }
                let last = steps.last().map_or(0, |(t, _)| *t);
                CacheUsage {
                    read,
                    write_5m: last - read,
                    write_1h: 0,
                }
            }
            Prepared::Explicit(marks) => explicit(marks, store, now),
        }
    }
}

fn explicit(marks: &[Breakpoint], store: &mut Store, now: Instant) -> CacheUsage {
    let mut read = 0;
    for mark in marks {
        if let Some((end, _)) = mark
            .lookback
            .iter()
            .filter(|(end, _)| *end > read)
            .find(|(_, h)| store.hit(*h, now, FIVE_MINUTES))
        {
            read = *end;
        }
    }
    let mut usage = CacheUsage {
        read,
        ..CacheUsage::default()
    };
    let mut covered = read;
    for mark in marks {
        let (end, hash) = mark.end;
        let life = match mark.ttl {
            Ttl::FiveMinutes => FIVE_MINUTES,
            Ttl::OneHour => ONE_HOUR,
        };
        store.put(hash, now + life);
        if end > covered {
            match mark.ttl {
                Ttl::FiveMinutes => usage.write_5m += end - covered,
                Ttl::OneHour => usage.write_1h += end - covered,
            }
            covered = end;
        }
    }
    usage
}

/// [`prepare`] and [`Prepared::apply`] in one (the tests').
#[cfg(test)]
pub fn apply(
    rule: Rule,
    parts: &[Part],
    prompt_tokens: u64,
    seed: u64,
    store: &mut Store,
    now: Instant,
    ttl: Duration,
) -> CacheUsage {
    prepare(rule, parts, prompt_tokens, seed).apply(store, now, ttl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str, tokens: u64, mark: Option<Ttl>) -> Part {
        Part {
            text: text.as_bytes().to_vec(),
            tokens,
            mark,
        }
    }

    #[test]
    fn openai_caches_from_1024_tokens_in_128_token_steps() {
        let mut store = Store::new(1000);
        let now = Instant::now();
        let ttl = Duration::from_secs(60);
        let rule = Rule::of(Api::Chat, "gpt-4o");
        let run = |store: &mut Store, parts: &[Part], total| {
            apply(rule, parts, total, 7, store, now, ttl)
        };
        let short = [part("a", 1000, None)];
        assert_eq!(run(&mut store, &short, 1000), CacheUsage::default());
        let first = [part("system", 1100, None), part("question one", 200, None)];
        let usage = run(&mut store, &first, 1300);
        assert_eq!((usage.read, usage.write_5m), (0, 1280));
        // The next turn resends the history: the longest step seen is read.
        let next = [
            part("system", 1100, None),
            part("question one", 200, None),
            part("answer", 300, None),
        ];
        let usage = run(&mut store, &next, 1600);
        assert_eq!((usage.read, usage.write_5m), (1280, 256));
        // Another key's scope shares nothing.
        let usage = apply(rule, &next, 1600, 8, &mut store, now, ttl);
        assert_eq!(usage.read, 0);
        // A different system prompt, past the first steps' common bytes, misses.
        let other = [part("SYSTEM", 1100, None), part("question one", 200, None)];
        assert_eq!(run(&mut store, &other, 1300).read, 0);
    }

    #[test]
    fn anthropic_writes_at_breakpoints_with_their_ttls_and_reads_back_20_parts() {
        let mut store = Store::new(1000);
        let now = Instant::now();
        let rule = Rule::of(Api::Messages, "claude-sonnet-4-5");
        let ttl = Duration::from_secs(1);
        let first = [
            part("tools", 600, Some(Ttl::OneHour)),
            part("system", 900, Some(Ttl::FiveMinutes)),
            part("user 1", 50, None),
        ];
        let usage = apply(rule, &first, 1550, 1, &mut store, now, ttl);
        // The first breakpoint (600 tokens) is below Sonnet's 1,024: not cached.
        assert_eq!(
            usage,
            CacheUsage {
                read: 0,
                write_5m: 1500,
                write_1h: 0
            }
        );
        let next = [
            part("tools", 600, Some(Ttl::OneHour)),
            part("system", 900, None),
            part("user 1", 50, None),
            part("assistant 1", 100, None),
            part("user 2", 50, Some(Ttl::FiveMinutes)),
        ];
        let usage = apply(rule, &next, 1700, 1, &mut store, now, ttl);
        assert_eq!(
            usage,
            CacheUsage {
                read: 1500,
                write_5m: 200,
                write_1h: 0
            }
        );
        // Haiku 3.5 needs 2,048.
        let haiku = Rule::of(Api::Messages, "claude-3-5-haiku-latest");
        let usage = apply(haiku, &first, 1550, 2, &mut store, now, ttl);
        assert_eq!(usage, CacheUsage::default());
        let long = [part("doc", 5000, Some(Ttl::OneHour))];
        let usage = apply(haiku, &long, 5000, 2, &mut store, now, ttl);
        assert_eq!(
            usage,
            CacheUsage {
                read: 0,
                write_5m: 0,
                write_1h: 5000
            }
        );
    }

    #[test]
    fn minimums_by_model() {
        let min = |api, model| match Rule::of(api, model) {
            Rule::Automatic { minimum, .. } | Rule::Explicit { minimum } => minimum,
        };
        assert_eq!(min(Api::Messages, "claude-opus-4-5"), 4096);
        assert_eq!(min(Api::Messages, "claude-3-haiku-20240307"), 2048);
        assert_eq!(
            min(Api::Bedrock, "anthropic.claude-sonnet-4-20250514-v1:0"),
            1024
        );
        assert_eq!(min(Api::Gemini, "gemini-2.5-pro"), 4096);
        assert_eq!(min(Api::Gemini, "gemini-2.5-flash"), 1024);
        assert_eq!(min(Api::Responses, "gpt-4o"), 1024);
    }
}
