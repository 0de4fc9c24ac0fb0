//! The load a run sends: open loop at a rate (and its arrival process) or closed loop at a
//! concurrency, and the shard of the schedule one process sends.

use serde::{Deserialize, Serialize};

/// Open loop at a rate, or closed loop at a concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Load {
    Open { rate: f64, arrival: Arrival },
    Closed { concurrency: usize },
}

impl Default for Load {
    fn default() -> Load {
        Load::Closed { concurrency: 0 }
    }
}

/// The arrival process of an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced, `1 / rate` apart.
    Constant,
    /// A Poisson process: exponential gaps of mean `1 / rate`, from a seeded generator.
    Poisson,
}

/// One shard of a schedule: `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole schedule (no sharding).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
