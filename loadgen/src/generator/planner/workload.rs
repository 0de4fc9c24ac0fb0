//! What a run sends and at what pace, beyond one body at one rate: a request corpus
//! (`--requests-file`), a ramp (`--stages`) or a recorded trace (`--trace`), each checked
//! against the options it cannot go with.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::generator::corpus::synth::{chat_body, class_of};
use crate::generator::corpus::{class_id, Corpus, Entry};
use crate::generator::plan::DEFAULT_MODEL;
use crate::generator::plan_error::PlanError;
use crate::generator::quantity::parse_rate;
use crate::generator::rate_curve::{trace, RateCurve, Replay, Stages};
use crate::model::load::Arrival;
use crate::model::load::Load;
use crate::options::LoadArgs;
use crate::results::plan::Order;
use crate::wire::target::{streams_by_path, RequestSpec};

use super::load::Timing;

/// The workload a run's options name.
#[derive(Debug)]
pub(super) struct Workload {
    pub corpus: Option<Arc<Corpus>>,
    pub pace: RateCurve,
    pub load: Load,
    pub duration: Option<Duration>,
}

/// Resolves the workload of `args`, whose load (`given` when a command set it, not the
/// options) and times are already checked.
pub(super) fn resolve(
    args: &LoadArgs,
    timing: &Timing,
    given: bool,
    headers: &[(HeaderName, HeaderValue)],
) -> Result<Workload, PlanError> {
    refuse_unpaired(args, given)?;
    let target_streams = args.targets.iter().any(|t| streams_by_path(t));
    if let Some(path) = &args.trace {
        return replay(args, path, timing, headers, target_streams);
    }
    let corpus = match &args.requests_file {
        Some(path) => Some(corpus(args, path, headers, target_streams)?),
        None => None,
    };
    match &args.stages {
        Some(text) => stages(args, text, timing, corpus),
        None => Ok(Workload {
            corpus,
            pace: RateCurve::Steady,
            load: timing.load,
            duration: timing.duration,
        }),
    }
}

/// Refuses a pace where a command sets its own loads, and options without the one they need.
fn refuse_unpaired(args: &LoadArgs, given: bool) -> Result<(), PlanError> {
    let paced = args.trace.is_some() || args.stages.is_some();
    if paced && given {
        return Err(PlanError::Excludes(
            "--stages or --trace",
            "this command",
            "it sets its own loads; use them with `loadgen run`",
        ));
    }
    if args.speedup.is_some() && args.trace.is_none() {
        return Err(PlanError::Missing(
            "--trace (--speedup replays a trace faster)",
        ));
    }
    if args.requests_order.is_some() && args.requests_file.is_none() {
        return Err(PlanError::Missing(
            "--requests-file (--requests-order draws from it)",
        ));
    }
    Ok(())
}

/// The corpus of `--requests-file`, every request streaming when a target's path streams.
fn corpus(
    args: &LoadArgs,
    path: &Path,
    headers: &[(HeaderName, HeaderValue)],
    target_streams: bool,
) -> Result<Arc<Corpus>, PlanError> {
    if args.request.body.is_some() || args.request.scenario.is_some() {
        return Err(PlanError::Excludes(
            "--requests-file",
            "--body and --scenario",
            "every request comes from the file",
        ));
    }
    let order = Order::parse(args.requests_order.as_deref().unwrap_or("random"))?;
    let mut corpus = Corpus::read(path, order, headers, streams_by_path)?;
    if target_streams {
        for entry in &mut corpus.entries {
            entry.request.stream = true;
        }
    }
    Ok(Arc::new(corpus))
}

/// A ramp in stages (`--stages TEXT`): the stages set the duration and the mean rate.
fn stages(
    args: &LoadArgs,
    text: &str,
    timing: &Timing,
    corpus: Option<Arc<Corpus>>,
) -> Result<Workload, PlanError> {
    let Load::Open { arrival, .. } = timing.load else {
        return Err(PlanError::Excludes(
            "--stages",
            "--concurrency",
            "stages ramp an arrival rate (open loop)",
        ));
    };
    if args.duration.is_some() {
        return Err(PlanError::Excludes(
            "--stages",
            "--duration",
            "the stages' durations add up to the run's",
        ));
    }
    // --rate is where the first stage starts from (0 without it).
    let start = match args.rate.as_deref() {
        Some(rate) => parse_rate(rate)?,
        None => 0.0,
    };
    let stages = Stages::parse(text, start)?;
    let duration = stages
        .duration()
        .checked_sub(timing.warmup)
        .filter(|d| !d.is_zero())
        .ok_or(PlanError::Excludes(
            "--warmup",
            "--stages this short",
            "the warm-up is the stages' first part and must leave some of them measured",
        ))?;
    Ok(Workload {
        corpus,
        load: Load::Open {
            rate: stages.mean_rate(),
            arrival,
        },
        pace: RateCurve::Stages(stages),
        duration: Some(duration),
    })
}

/// A trace's rows as a sequential corpus of chat requests (each row's prompt and output
/// tokens), sent at the rows' instants.
fn replay(
    args: &LoadArgs,
    path: &Path,
    timing: &Timing,
    headers: &[(HeaderName, HeaderValue)],
    target_streams: bool,
) -> Result<Workload, PlanError> {
    let speedup = replay_speedup(args)?;
    let mut rows = trace::read(path, speedup)?;
    // The run ends after the last row, or at the end of --duration.
    let last = rows.last().map_or(0, |r| r.at_ns);
    let end_ns = match timing.duration {
        Some(d) if args.duration.is_some() => (timing.warmup + d).as_nanos() as u64,
        _ => last + 1_000,
    };
    rows.retain(|r| r.at_ns < end_ns);
    let measured = Duration::from_nanos(end_ns)
        .checked_sub(timing.warmup)
        .filter(|d| !d.is_zero() && !rows.is_empty())
        .ok_or(PlanError::Excludes(
            "--warmup",
            "a trace this short",
            "the warm-up is the trace's first part and must leave some of it measured",
        ))?;
    let stream = target_streams || args.request.scenario.as_deref() == Some("chat-stream");
    let (entries, classes) = trace_entries(args, &rows, stream, headers);
    let source = path.display().to_string();
    let crc32 = crc32fast::hash(source.as_bytes());
    let instants: Vec<u64> = rows.iter().map(|r| r.at_ns).collect();
    let span_s = (end_ns as f64 / 1e9).max(1e-3);
    Ok(Workload {
        load: Load::Open {
            rate: instants.len() as f64 / span_s,
            arrival: Arrival::Constant,
        },
        corpus: Some(Arc::new(Corpus::new(
            source.clone(),
            entries,
            classes,
            Order::Sequential,
            crc32,
        ))),
        pace: RateCurve::Trace(Replay::new(source, speedup, instants)),
        duration: Some(measured),
    })
}

/// `--speedup`, after refusing what a trace cannot go with.
fn replay_speedup(args: &LoadArgs) -> Result<f64, PlanError> {
    if args.rate.is_some() || args.concurrency.is_some() || args.stages.is_some() {
        return Err(PlanError::Excludes(
            "--trace",
            "--rate, --concurrency and --stages",
            "a trace is replayed at its own instants (--speedup replays it faster)",
        ));
    }
    if args.requests_file.is_some() || args.request.body.is_some() {
        return Err(PlanError::Excludes(
            "--trace",
            "--requests-file and --body",
            "each row's request is made from its token counts",
        ));
    }
    match args.speedup {
        None => Ok(1.0),
        Some(s) if s.is_finite() && s > 0.0 && s <= 1e6 => Ok(s),
        Some(s) => Err(PlanError::Named(
            "--speedup",
            s.to_string(),
            "a factor above 0, like 2 (twice as fast)",
        )),
    }
}

/// Each row's chat request, of its token counts, and the size classes they fall in.
fn trace_entries(
    args: &LoadArgs,
    rows: &[trace::Row],
    stream: bool,
    headers: &[(HeaderName, HeaderValue)],
) -> (Vec<Entry>, Vec<String>) {
    let model = args.request.model.as_deref().unwrap_or(DEFAULT_MODEL);
    let mut rng = Pcg64Mcg::seed_from_u64(args.request.seed.unwrap_or(0));
    let mut classes: Vec<String> = Vec::new();
    let entries = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let body = chat_body(
                model,
                row.input_tokens.max(1),
                row.output_tokens,
                stream,
                false,
                i as u64,
                &mut rng,
            );
            // Three size classes: never past the limit.
            let class = class_id(&mut classes, class_of(row.input_tokens)).unwrap_or(0);
            Entry {
                request: RequestSpec {
                    scenario: "trace".into(),
                    stream,
                    body: Bytes::from(body.to_string()),
                    max_tokens: Some(row.output_tokens.max(1)),
                    headers: headers.to_vec(),
                },
                path: None,
                weight: 1.0,
                class,
                prompt_tokens: u32::try_from(row.input_tokens.max(1)).unwrap_or(u32::MAX),
            }
        })
        .collect();
    (entries, classes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::plan::Plan;
    use crate::options::RequestFlags;

    fn plan(args: LoadArgs) -> Result<Plan, PlanError> {
        args.plan()
    }

    #[test]
    fn stages_set_the_duration_and_the_mean_rate() {
        let p = plan(LoadArgs {
            stages: Some("10s:1000,10s:1000".into()),
            warmup: Some("5s".into()),
            ..LoadArgs::default()
        })
        .unwrap();
        assert_eq!(p.duration, Some(Duration::from_secs(15)));
        assert!(matches!(p.load, Load::Open { rate, .. } if rate == 750.0));
        assert!(matches!(p.pace, RateCurve::Stages(_)));
    }

    #[test]
    fn workloads_refuse_what_they_cannot_go_with() {
        let cases = [
            (
                LoadArgs {
                    stages: Some("1s:10".into()),
                    concurrency: Some(2),
                    ..LoadArgs::default()
                },
                "--stages excludes --concurrency",
            ),
            (
                LoadArgs {
                    stages: Some("1s:10".into()),
                    duration: Some("5s".into()),
                    ..LoadArgs::default()
                },
                "--stages excludes --duration",
            ),
            (
                LoadArgs {
                    stages: Some("1s:10".into()),
                    warmup: Some("1s".into()),
                    ..LoadArgs::default()
                },
                "--warmup excludes --stages this short",
            ),
            (
                LoadArgs {
                    speedup: Some(2.0),
                    ..LoadArgs::default()
                },
                "missing --trace",
            ),
            (
                LoadArgs {
                    requests_order: Some("sequential".into()),
                    ..LoadArgs::default()
                },
                "missing --requests-file",
            ),
            (
                LoadArgs {
                    requests_file: Some("/nonexistent/c.jsonl".into()),
                    request: RequestFlags {
                        body: Some("{}".into()),
                        ..Default::default()
                    },
                    ..LoadArgs::default()
                },
                "--requests-file excludes --body",
            ),
            (
                LoadArgs {
                    requests_file: Some("/nonexistent/c.jsonl".into()),
                    ..LoadArgs::default()
                },
                "cannot use --requests-file /nonexistent/c.jsonl",
            ),
            (
                LoadArgs {
                    trace: Some("/nonexistent/t.csv".into()),
                    rate: Some("5".into()),
                    ..LoadArgs::default()
                },
                "--trace excludes --rate",
            ),
        ];
        for (args, says) in cases {
            let err = plan(args.clone()).unwrap_err().to_string();
            assert!(err.starts_with(says), "{args:?}: {err}");
        }
        let sweep = LoadArgs {
            stages: Some("1s:10".into()),
            ..LoadArgs::default()
        }
        .plan_at(Some(Load::Closed { concurrency: 1 }));
        assert!(sweep.unwrap_err().to_string().contains("this command"));
    }
}
