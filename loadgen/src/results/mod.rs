//! Results: the versioned JSON result of each command (`run`, `overhead`, `compare`, `sweep`,
//! `ladder`, `capacity`, `profile`) and the header (`envelope`) every result file carries, as
//! plain data written and read back as itself, with the records they are made of (plans,
//! metrics and summaries, clocks, resources; the targets, loads and shards they name are the
//! `model`'s). The commands fill them; `report` renders
//! them. Nothing here imports a layer above: the layers above build these types.

pub mod behaviour;
pub mod breakdown;
pub mod capacity;
pub mod clock;
pub mod compare;
pub mod comparison;
pub mod cost;
pub(crate) mod envelope;
pub mod folded;
pub mod hdr_codec;
pub mod ladder;
pub mod memory;
pub mod metric;
pub mod overhead;
pub mod pacing;
pub mod plan;
pub mod profile;
pub mod resources;
pub mod run;
pub mod selftest;
pub mod series;
pub mod sessions;
pub mod shards;
pub mod sweep;
pub mod validity;
