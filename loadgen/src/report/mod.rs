//! Reports of results: the terminal summary, HdrHistogram percentile files, and the tables of
//! `loadgen overhead` as text, Markdown and CSV.

pub mod hgrm;
pub mod overhead;
pub mod table;
pub mod terminal;
