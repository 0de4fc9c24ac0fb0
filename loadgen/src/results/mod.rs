//! Results, a data layer: the versioned JSON result of each command and the header (`envelope`)
//! every result file carries.

pub(crate) mod envelope;
pub mod run;
