//! A run broken down: by second of its timeline, and by class of its corpus or stage of its pace.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::results::metric::Summary;

/// One second of the timeline (by completion time, from the start of the measured window).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SecondSummary {
    pub second: u64,
    pub ok: u64,
    pub errors: u64,
    pub response_time_p50_us: u64,
    pub response_time_p99_us: u64,
    #[serde(default)]
    pub response_time_max_us: u64,
    /// The second's response times (2 significant digits), a compressed V2 histogram in base64,
    /// so shards' timelines add up exactly (`loadgen merge`).
    #[serde(default)]
    pub response_time_histogram: String,
}

impl SecondSummary {
    /// Second `second` of failures `errors` and response times `h`.
    pub fn of(second: u64, errors: u64, h: &Histogram<u64>) -> SecondSummary {
        SecondSummary {
            second,
            ok: h.len(),
            errors,
            response_time_p50_us: h.value_at_quantile(0.5),
            response_time_p99_us: h.value_at_quantile(0.99),
            response_time_max_us: h.max(),
            response_time_histogram: crate::results::hdr_codec::encode(h),
        }
    }
}

/// A group in the result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupSummary {
    pub name: String,
    pub requests: u64,
    #[serde(default)]
    pub ok: u64,
    pub errors: u64,
    pub response_time: Summary,
    /// Streams only.
    #[serde(default)]
    pub ttft: Option<Summary>,
    pub mean_body_bytes: f64,
    /// By the 4-bytes-a-token estimate.
    pub mean_prompt_tokens: f64,
    /// Per successful stream.
    #[serde(default)]
    pub mean_output_tokens: f64,
    /// A stage's plan beside what it got.
    #[serde(default, skip_serializing_if = "Option::is_none", flatten)]
    pub stage: Option<StagePlan>,
}

/// What a stage was planned to send, and what it sent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct StagePlan {
    pub start_s: f64,
    pub end_s: f64,
    pub from_rate: f64,
    pub to_rate: f64,
    /// Requests the ramp is expected to send in the stage.
    pub planned_requests: f64,
    /// Requests recorded (answered or failed) per second of the stage's measured part.
    pub achieved_rate: f64,
}
