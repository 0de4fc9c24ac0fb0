//! The versioned JSON result of `loadgen behaviour`: per gateway, what it did with traffic when
//! an upstream failed, throttled, repeated or differed, each figure with an interval over the
//! trials, and each trial's own figures and per-second timeline.
//!
//! The figures keep the names the method defines: `amplification` (upstream requests per
//! client request), `retry_delay_ms` (between a request's attempts, as the upstreams saw them),
//! `switch_over_ms` (first failure until the gateway stopped sending to the failing upstream;
//! `null` with `said` "never within the window" when it did not), `hit_rate` (share of requests
//! no upstream saw).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Identifies the result format; bumped when a field changes meaning or goes away.
pub const SCHEMA: &str = "gatebench.loadgen.behaviour/1";

/// What was measured and how.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BehaviourResult {
    #[serde(flatten)]
    pub envelope: crate::results::envelope::Envelope,
    /// failover, retries, cache, limits or balance.
    pub scenario: String,
    pub settings: Settings,
    /// The mocks steered, in the gateways' order.
    pub upstreams: Vec<String>,
    pub gateways: Vec<GatewayBehaviour>,
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
    pub interrupted: bool,
}

/// The settings every trial ran with.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Settings {
    pub rate: f64,
    pub trials: usize,
    /// What the first upstream did in its window.
    pub fault: String,
    pub before_ms: u64,
    pub window_ms: u64,
    pub after_ms: u64,
    pub gap_ms: u64,
    /// header, body or both.
    pub mark: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub weights: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_ms: Option<f64>,
}

/// One gateway's behaviour.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GatewayBehaviour {
    pub name: String,
    pub url: String,
    /// `marks`: each request followed by the mark the upstreams recorded; `counts`: the gateway
    /// passed no mark on, and the figures come from the upstreams' counts over time.
    pub source: String,
    /// Across trials, by name (`amplification`, `retry_delay_ms`, `switch_over_ms`, ...).
    pub figures: BTreeMap<String, Figure>,
    /// What a reader must know of the figures (said in the reports too).
    #[serde(default)]
    pub notes: Vec<String>,
    /// limits: each key's accepted rate against the limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<KeyShare>,
    /// balance: each upstream's share against its weight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shares: Vec<UpstreamShare>,
    /// limits: what a refusal looked like (the first one a probe after the load got).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    pub trials: Vec<Trial>,
}

/// One figure over the trials: the mean with a Student's t interval (95%); `estimate` `null`
/// when a trial had none (`said` tells why).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Figure {
    pub estimate: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub per_trial: Vec<Option<f64>>,
    /// How the figure reads: the estimate with its interval, or why there is none.
    pub said: String,
}

/// One key under a rate limit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyShare {
    pub key: String,
    /// Requests sent and accepted a second (over all trials).
    pub sent_per_s: f64,
    pub accepted_per_s: f64,
    /// Accepted against the limit (1.0: exactly the limit).
    pub of_limit: f64,
    /// Refused requests that reached an upstream anyway.
    pub refused_reached_upstream: u64,
}

/// One upstream's share of the traffic.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UpstreamShare {
    pub upstream: String,
    pub weight: f64,
    /// The share the weights give it.
    pub expected: f64,
    /// What it received before the window (all healthy) and in it (the first one slow).
    pub before: f64,
    pub during: f64,
}

/// A refusal as the client got it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Refusal {
    pub status: u16,
    /// The headers a client acts on (retry-after, x-ratelimit-*, ...).
    pub headers: BTreeMap<String, String>,
    /// The body's first 500 bytes.
    pub body: String,
}

/// One trial.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Trial {
    pub requests: u64,
    pub ok: u64,
    pub errors: BTreeMap<String, u64>,
    /// Arrivals at each upstream, and by status over all.
    pub upstream_requests: BTreeMap<String, u64>,
    pub upstream_by_status: BTreeMap<String, u64>,
    /// Arrivals that carried no mark (the gateway's own, or a mark it stripped).
    pub unmarked: u64,
    pub figures: BTreeMap<String, Option<f64>>,
    /// Each second from the start of the load: what the client got and what each upstream
    /// received.
    pub seconds: Vec<Second>,
}

/// One second of a trial.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Second {
    /// From the start of the load.
    pub second: u64,
    /// before, window or after.
    pub phase: String,
    pub sent: u64,
    pub errors: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub by_upstream: BTreeMap<String, u64>,
}
