//! Reports of a result: the terminal summary and HdrHistogram percentile files.

pub mod hgrm;
pub mod terminal;
