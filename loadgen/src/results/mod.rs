//! Results: the versioned JSON result of each command (`run`, `overhead`, `compare`, `sweep`,
//! `ladder`, `capacity`, `profile`) and the header (`envelope`) every result file carries. The
//! commands fill them; `report` renders them.

pub mod capacity;
pub mod compare;
pub(crate) mod envelope;
pub mod ladder;
pub mod overhead;
pub mod profile;
pub mod run;
pub mod sweep;
pub mod target;
