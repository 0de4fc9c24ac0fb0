//! Reports of results: the terminal summary, HdrHistogram percentile files and interval logs, tables as text,
//! Markdown and CSV, and self-contained HTML pages with SVG plots (`loadgen report`).

pub mod capacity;
pub mod compare;
pub mod disclosure;
pub mod flame;
pub mod hgrm;
pub mod hlog;
pub mod html;
pub mod ladder;
pub mod leaderboard;
pub mod merge;
pub mod output;
pub mod overhead;
pub mod profile;
pub mod render;
pub mod resources;
pub mod run;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod terminal;
