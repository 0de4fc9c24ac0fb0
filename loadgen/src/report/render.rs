//! `loadgen report RESULT.json --format md|csv|json|html`: any result file, rendered again.

use anyhow::{bail, Context as _};

use crate::results::behaviour::{BehaviourResult, SCHEMA as BEHAVIOUR};
use crate::results::capacity::SCHEMA as CAPACITY;
use crate::results::compare::SCHEMA as COMPARE;
use crate::results::ladder::SCHEMA as LADDER;
use crate::results::overhead::{OverheadResult, SCHEMA as OVERHEAD};
use crate::results::profile::SCHEMA as PROFILE;
use crate::results::run::SCHEMA as RUN;
use crate::results::sweep::SCHEMA as SWEEP;

use super::{html, overhead, run};
use crate::results::capacity::CapacityResult;
use crate::results::compare::CompareResult;
use crate::results::ladder::LadderResult;
use crate::results::profile::ProfileResult;
use crate::results::run::RunResult;
use crate::results::sweep::SweepResult;

use crate::options::Format;

/// A parsed result file of any schema loadgen writes.
#[derive(Debug)]
pub(crate) enum Result {
    Run(Box<RunResult>, serde_json::Value),
    Overhead(Box<OverheadResult>),
    Compare(Box<CompareResult>, serde_json::Value),
    Sweep(Box<SweepResult>, serde_json::Value),
    Ladder(Box<LadderResult>, serde_json::Value),
    Capacity(Box<CapacityResult>, serde_json::Value),
    Profile(Box<ProfileResult>, serde_json::Value),
    Behaviour(Box<BehaviourResult>),
}

/// The JSON of the result file at `path`, and its schema (empty when it names none).
fn parse(path: &std::path::Path) -> anyhow::Result<(serde_json::Value, String)> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let schema = value
        .get("schema")
        .and_then(|s| s.as_str())
        .unwrap_or("")
        .to_string();
    Ok((value, schema))
}

/// The schema the result file at `path` names.
pub(crate) fn schema_of(path: &std::path::Path) -> anyhow::Result<String> {
    Ok(parse(path)?.1)
}

pub(crate) fn read(path: &std::path::Path) -> anyhow::Result<Result> {
    let (value, schema) = parse(path)?;
    let invalid = |e: serde_json::Error| {
        anyhow::anyhow!("{} is not a valid {schema} result: {e}", path.display())
    };
    match schema.as_str() {
        RUN => Ok(Result::Run(
            Box::new(serde_json::from_value(value.clone()).map_err(invalid)?),
            value,
        )),
        OVERHEAD => Ok(Result::Overhead(Box::new(
            serde_json::from_value(value).map_err(invalid)?,
        ))),
        COMPARE => Ok(Result::Compare(
            Box::new(serde_json::from_value(value.clone()).map_err(invalid)?),
            value,
        )),
        SWEEP => Ok(Result::Sweep(
            Box::new(serde_json::from_value(value.clone()).map_err(invalid)?),
            value,
        )),
        LADDER => Ok(Result::Ladder(
            Box::new(serde_json::from_value(value.clone()).map_err(invalid)?),
            value,
        )),
        CAPACITY => Ok(Result::Capacity(
            Box::new(serde_json::from_value(value.clone()).map_err(invalid)?),
            value,
        )),
        PROFILE => Ok(Result::Profile(
            Box::new(serde_json::from_value(value.clone()).map_err(invalid)?),
            value,
        )),
        BEHAVIOUR => Ok(Result::Behaviour(Box::new(
            serde_json::from_value(value).map_err(invalid)?,
        ))),
        other => bail!(
            "{} has schema '{other}': expected one of {RUN}, {OVERHEAD}, {COMPARE}, {SWEEP}, {LADDER}, {CAPACITY}, {PROFILE}, {BEHAVIOUR}",
            path.display()
        ),
    }
}

/// Renders the result file at `path` in `format`.
pub fn render(path: &std::path::Path, format: Format) -> anyhow::Result<String> {
    Ok(match (read(path)?, format) {
        (Result::Run(view, _), Format::Md) => run::markdown(&view),
        (Result::Run(view, _), Format::Csv) => run::runs_csv(&view),
        (Result::Run(_, value), Format::Json) => serde_json::to_string_pretty(&value)? + "\n",
        (Result::Run(view, _), Format::Html) => html::run_page(&view),
        (Result::Overhead(r), Format::Md) => overhead::markdown(&r),
        (Result::Overhead(r), Format::Csv) => overhead::delta_csv(&r),
        (Result::Overhead(r), Format::Json) => serde_json::to_string_pretty(&r)? + "\n",
        (Result::Overhead(r), Format::Html) => html::overhead_page(&r),
        (Result::Compare(view, _), Format::Md) => super::compare::markdown(&view),
        (Result::Compare(view, _), Format::Csv) => super::compare::trials_csv(&view),
        (Result::Compare(_, value), Format::Json) => serde_json::to_string_pretty(&value)? + "\n",
        (Result::Compare(view, _), Format::Html) => html::compare_page(&view),
        (Result::Sweep(view, _), Format::Md) => super::sweep::sweep_markdown(&view),
        (Result::Sweep(view, _), Format::Csv) => super::sweep::sweep_csv(&view),
        (Result::Sweep(view, _), Format::Html) => html::sweep_page(&view),
        (Result::Ladder(view, _), Format::Md) => super::ladder::ladder_markdown(&view),
        (Result::Ladder(view, _), Format::Csv) => super::ladder::ladder_csv(&view),
        (Result::Ladder(view, _), Format::Html) => html::ladder_page(&view),
        (Result::Behaviour(r), Format::Md) => super::behaviour::markdown(&r),
        (Result::Behaviour(r), Format::Csv) => super::behaviour::csv(&r),
        (Result::Behaviour(r), Format::Json) => serde_json::to_string_pretty(&r)? + "\n",
        (Result::Behaviour(r), Format::Html) => html::behaviour_page(&r),
        (Result::Capacity(view, _), Format::Md) => super::capacity::markdown(&view),
        (Result::Capacity(view, _), Format::Csv) => super::capacity::steps_table(&view).to_csv(),
        (Result::Capacity(view, _), Format::Html) => html::capacity_page(&view),
        (Result::Profile(view, _), Format::Md) => super::profile::markdown(&view),
        (Result::Profile(view, _), Format::Csv) => super::compare::trials_csv(&view.compare),
        (Result::Profile(view, _), Format::Html) => super::profile::html(&view),
        (
            Result::Sweep(_, value)
            | Result::Ladder(_, value)
            | Result::Capacity(_, value)
            | Result::Profile(_, value),
            Format::Json,
        ) => serde_json::to_string_pretty(&value)? + "\n",
    })
}
