//! `loadgen report`: a result file rendered again (Markdown, CSV, JSON or HTML), or several
//! `loadgen compare` results in one table (`--combine`).

use crate::engine::run::EXIT_OK;
use crate::options::{Format, ReportArgs};
use crate::report::leaderboard;
use crate::report::output::write_atomically;
use crate::report::render::render;

use super::command::no_preset;
use super::{show, Command};

impl Command for ReportArgs {
    type Plan = ReportArgs;

    fn plan(self) -> anyhow::Result<ReportArgs> {
        Ok(self)
    }

    fn execute(args: ReportArgs, _: Vec<String>) -> anyhow::Result<u8> {
        report(args)
    }

    fn preset(_: &ReportArgs) -> anyhow::Result<toml::Table> {
        Err(no_preset())
    }

    fn describe(args: &ReportArgs) -> String {
        format!("report: {} result file(s)", args.results.len())
    }
}

/// Renders the result files `args` names.
fn report(args: ReportArgs) -> anyhow::Result<u8> {
    let text = match (args.combine, args.results.as_slice()) {
        (false, [one]) => render(one, args.format)?,
        (false, _) => anyhow::bail!(
            "report renders one result file; give --combine to put several `loadgen compare` \
             results in one table"
        ),
        (true, paths) => {
            let views = leaderboard::read(paths)?;
            match args.format {
                Format::Md => leaderboard::markdown(&views),
                Format::Html => leaderboard::html(&views),
                Format::Csv => leaderboard::csv(&views),
                Format::Json => anyhow::bail!(
                    "--combine writes md, html or csv; each result is its own JSON already"
                ),
            }
        }
    };
    match args.out {
        Some(path) => write_atomically(&path, text.as_bytes())?,
        None => show(&text),
    }
    Ok(EXIT_OK)
}
