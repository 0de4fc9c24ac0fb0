//! How the rate of an open loop goes over time: steady at the load's rate, ramped in stages
//! (`--stages`), or replayed from a recorded trace (`--trace`).

use std::sync::Arc;

use serde::Serialize;

pub mod stages;
pub mod trace;

pub use stages::Stages;

/// The shape of an open loop's arrivals over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "pace", rename_all = "snake_case")]
pub enum RateCurve {
    /// The load's rate from start to end.
    Steady,
    /// Linear ramps from stage to stage.
    Stages(Stages),
    /// A recorded trace's instants.
    Trace(Replay),
}

/// A trace replayed: its instants, ns from the start, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    pub source: String,
    pub speedup: f64,
    pub rows: usize,
    /// Span from the first row to the last, after the speed-up, seconds.
    pub span_s: f64,
    #[serde(skip)]
    pub instants: Arc<[u64]>,
}

impl Replay {
    pub fn new(source: String, speedup: f64, instants: Vec<u64>) -> Replay {
        let span_s = instants.last().map_or(0.0, |ns| *ns as f64 / 1e9);
        Replay {
            source,
            speedup,
            rows: instants.len(),
            span_s,
            instants: instants.into(),
        }
    }
}
