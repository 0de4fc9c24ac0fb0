//! The model: what every layer works with and a result records as it is. The targets of a run
//! (with their names, roles and recording), its load (open or closed loop, the arrival process)
//! and its shard. Plain data that imports nothing else of the crate.

pub mod load;
pub mod role;
pub mod target;
