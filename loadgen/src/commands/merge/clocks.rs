//! Did the shards start together? Their starts judged on one reference's clock when every
//! shard measured the same one, else by each one's own clock and what its kernel says of it.

use super::check::ShardResult;
use crate::results::run::TargetRun;

/// Largest spread of the shards' starts (each by its own clock) for their sum to be the plan's
/// schedule: a millisecond is five slots at 5,000 req/s.
const MAX_START_SPREAD_US: i64 = 10_000;

/// Did the shards start together? Judged on one reference's clock when every shard measured
/// the same one, else by each one's own clock and what its kernel says of that clock (when the
/// shards ran on `hosts` hosts).
pub(super) fn clock_checks(
    shards: &[ShardResult],
    runs: &[&TargetRun],
    hosts: usize,
    reasons: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let reference = |r: &&TargetRun| -> Option<(i64, i64, String)> {
        let reference = r.clock.reference.as_ref()?;
        Some((
            r.clock.started_unix_us + reference.offset_us,
            reference.error_us,
            reference.url.clone(),
        ))
    };
    let referenced: Option<Vec<(i64, i64, String)>> = runs.iter().map(reference).collect();
    let one_reference = referenced
        .as_ref()
        .filter(|r| r.iter().all(|(_, _, url)| *url == r[0].2));
    let (starts, on): (Vec<i64>, String) = match one_reference {
        Some(r) => (
            r.iter().map(|(start, _, _)| *start).collect(),
            format!("on the clock of {}", r[0].2),
        ),
        None => {
            if referenced.is_some() {
                notes.push(
                    "the shards measured their clocks against different references: their \
                     starts are judged by their own clocks"
                        .into(),
                );
            }
            (
                runs.iter().map(|r| r.clock.started_unix_us).collect(),
                "by their own clocks".into(),
            )
        }
    };
    spread(&starts, &on, reasons);
    match one_reference {
        Some(r) => reference_note(r, notes),
        None if hosts >= 2 => kernel_notes(shards, runs, notes),
        None => {}
    }
}

/// A reason when the starts spread wider than the schedule allows.
fn spread(starts: &[i64], on: &str, reasons: &mut Vec<String>) {
    if let (Some(min), Some(max)) = (starts.iter().min(), starts.iter().max()) {
        if max - min > MAX_START_SPREAD_US {
            reasons.push(format!(
                "the shards' starts spread over {:.1} ms {on} (most {} ms): together they did \
                 not send the plan's schedule (give every shard the same --start-at, far enough \
                 ahead, on hosts whose clocks agree)",
                (max - min) as f64 / 1e3,
                MAX_START_SPREAD_US / 1_000
            ));
        }
    }
}

/// A note when a shard's offset to the reference is itself too uncertain.
fn reference_note(referenced: &[(i64, i64, String)], notes: &mut Vec<String>) {
    let error = referenced.iter().map(|(_, e, _)| *e).max().unwrap_or(0);
    if error > MAX_START_SPREAD_US {
        notes.push(format!(
            "a shard's offset to the reference is known only to within {:.1} ms (half its \
             shortest round trip): the starts compared on the reference are that uncertain",
            error as f64 / 1e3
        ));
    }
}

/// A note for each shard whose host's kernel doubts its own clock.
fn kernel_notes(shards: &[ShardResult], runs: &[&TargetRun], notes: &mut Vec<String>) {
    for (shard, run) in shards.iter().zip(runs) {
        let Some(kernel) = &run.clock.kernel else {
            continue;
        };
        if !kernel.synchronized {
            notes.push(format!(
                "shard {}: its host's clock is not synchronised (adjtimex): its start may be \
                 off from the others' by any amount",
                shard.index
            ));
        } else if kernel.max_error_us > MAX_START_SPREAD_US {
            notes.push(format!(
                "shard {}: its host's clock may be off by up to {:.1} ms (adjtimex)",
                shard.index,
                kernel.max_error_us as f64 / 1e3
            ));
        }
    }
}
