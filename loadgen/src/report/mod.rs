//! Reports of results, each rendered from the result type itself (`results`): one module per
//! kind of result (`run`, `compare`, `overhead`, `sweep`, `ladder`, `capacity`, `profile`,
//! `profile_diff` for its `--diff`, and `merge` for a merged run) with its tables, terminal report, CSV and Markdown; the disclosure
//! section every write-up ends with (`disclosure`); the line on how a run's workers waited
//! (`waiting`); self-contained HTML pages with SVG plots
//! (`html`, `svg`); HdrHistogram percentile files and interval logs (`hgrm`, `hlog`); flame
//! graphs; the combined table of several comparisons (`leaderboard`); a result file read back
//! and rendered again (`render`, for `loadgen report`) or written whole (`output`).

pub mod behaviour;
pub mod capacity;
pub mod compare;
pub mod disclosure;
pub mod flame;
pub mod format;
pub mod hgrm;
pub mod hlog;
pub mod html;
pub mod ladder;
pub mod leaderboard;
pub mod memory;
pub mod merge;
pub mod output;
pub mod overhead;
pub mod profile;
pub mod profile_diff;
pub mod render;
pub mod resources;
pub mod run;
pub mod selftest;
pub mod sessions;
pub mod stacks;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod terminal;
pub mod waiting;
