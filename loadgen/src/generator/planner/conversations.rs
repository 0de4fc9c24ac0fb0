//! The session options (`--sessions`, `--think`, `--max-sessions`, `--users`, `--turn-gap`)
//! validated into a [`SessionPlan`], each refused with the options it cannot go with.

use std::sync::Arc;

use gatebench_shared::duration::parse_us;
use gatebench_shared::latency::Distribution;

use crate::generator::plan_error::PlanError;
use crate::generator::sessions::body::{Dialect, Shape};
use crate::generator::sessions::marks::CacheMarks;
use crate::generator::sessions::plan::{SessionPlan, Users};
use crate::model::load::{Arrival, Load};
use crate::options::{LoadArgs, SessionFlags};

/// Most users of `--users`.
const MOST_USERS: usize = 100_000;

/// The run's sessions, and the load they are sent at; `None` without `--sessions`.
pub(super) fn resolve(
    args: &LoadArgs,
    load: Load,
) -> Result<Option<(Arc<SessionPlan>, Load)>, PlanError> {
    let flags = &args.conversations;
    let Some(path) = &flags.sessions else {
        refuse_orphans(args)?;
        return Ok(None);
    };
    refuse_with_sessions(args)?;
    let set = crate::generator::sessions::load(path)?;
    let think = match flags.think.as_deref() {
        Some(text) => text.parse::<Distribution>().map_err(|_| {
            PlanError::Named(
                "--think",
                text.to_string(),
                "a duration like 2s, or uniform:1s..3s, normal:2s,500ms, lognormal:2s,0.5",
            )
        })?,
        None => Distribution::ZERO,
    };
    let max_sessions = match flags.max_sessions {
        Some(0) => return Err(PlanError::Count("--max-sessions", 0, usize::MAX)),
        other => other,
    };
    let (users, load) = match flags.users {
        Some(count) => users(args, count)?,
        None => (None, load),
    };
    let dialect = Dialect::of_path(
        args.targets
            .first()
            .map_or("/v1/chat/completions", String::as_str),
    );
    let plan = SessionPlan {
        set: Arc::new(set),
        think,
        max_sessions,
        users,
        shape: shape(flags, dialect)?,
        salt: None,
    };
    Ok(Some((Arc::new(plan), load)))
}

/// The bodies' shape for `dialect`, with `--cache-marks` where its API has an explicit cache
/// (Anthropic's messages, Bedrock's Converse).
pub(crate) fn shape(flags: &SessionFlags, dialect: Dialect) -> Result<Shape, PlanError> {
    let Some(text) = flags.cache_marks.as_deref() else {
        return Ok(Shape::of(dialect));
    };
    let marks = text.parse::<CacheMarks>().map_err(|()| {
        PlanError::Named(
            "--cache-marks",
            text.to_string(),
            "none, system or history, with :1h for the one-hour life (history:1h)",
        )
    })?;
    if !dialect.takes_marks() {
        return Err(PlanError::Excludes(
            "--cache-marks",
            "a route other than Anthropic's /v1/messages or Bedrock's /converse",
            "the other APIs' caches need no marks (OpenAI's and Gemini's cache on their own)",
        ));
    }
    Ok(Shape { dialect, marks })
}

/// `--users N --turn-gap D`: N users, each one turn per gap, so `N / D` turns a second.
fn users(args: &LoadArgs, count: usize) -> Result<(Option<Users>, Load), PlanError> {
    if count == 0 || count > MOST_USERS {
        return Err(PlanError::Count("--users", count, MOST_USERS));
    }
    if args.rate.is_some() {
        return Err(PlanError::Excludes(
            "--users",
            "--rate",
            "the users' turn gap sets the pace; give one or the other",
        ));
    }
    let text = args
        .conversations
        .turn_gap
        .as_deref()
        .ok_or(PlanError::Missing(
            "--turn-gap (each user's gap between turns, with --users)",
        ))?;
    let gap_us = parse_us(text)
        .filter(|us| *us > 0)
        .ok_or_else(|| PlanError::Duration("--turn-gap", text.to_string(), ""))?;
    let users = Users {
        count,
        gap_ns: gap_us * 1_000,
    };
    let load = Load::Open {
        rate: count as f64 / (gap_us as f64 / 1e6),
        arrival: Arrival::Constant,
    };
    Ok((Some(users), load))
}

/// Session options without `--sessions`.
fn refuse_orphans(args: &LoadArgs) -> Result<(), PlanError> {
    let f = &args.conversations;
    let orphan = [
        ("--think", f.think.is_some()),
        ("--max-sessions", f.max_sessions.is_some()),
        ("--users", f.users.is_some()),
        ("--turn-gap", f.turn_gap.is_some()),
        ("--cache-marks", f.cache_marks.is_some()),
    ];
    match orphan.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(PlanError::Excludes(
            flag,
            "a run without --sessions",
            "it paces conversations; give --sessions FILE",
        )),
        None => Ok(()),
    }
}

/// What a run of sessions cannot take.
fn refuse_with_sessions(args: &LoadArgs) -> Result<(), PlanError> {
    let why = "a session's turns are built from its file and the answers so far";
    let excluded = [
        ("--requests-file", args.requests_file.is_some()),
        ("--trace", args.trace.is_some()),
        ("--stages", args.stages.is_some()),
        ("--body", args.request.body.is_some()),
        ("--concurrency", args.concurrency.is_some()),
        (
            "--shard with --users",
            args.shard.is_some() && args.conversations.users.is_some(),
        ),
    ];
    if let Some((flag, _)) = excluded.iter().find(|(_, given)| *given) {
        return Err(PlanError::Excludes("--sessions", flag, why));
    }
    if args.conversations.turn_gap.is_some() && args.conversations.users.is_none() {
        return Err(PlanError::Missing(
            "--users (--turn-gap is each user's gap)",
        ));
    }
    Ok(())
}
