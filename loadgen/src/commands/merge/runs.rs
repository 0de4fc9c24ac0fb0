//! Adding the shards' runs: counters summed, histograms added (per metric and per second of the
//! timeline), the achieved rate over the whole schedule, and the judgement made again on the sum.
//! Each shard is read as the run result it is, and the merged one is written as one.

use std::collections::BTreeMap;

use anyhow::{anyhow, Context as _};
use hdrhistogram::Histogram;

use super::check::ShardResult;
use super::clocks::clock_checks;
use super::name;
use crate::generator::histogram::new_histogram;
use crate::model::load::{Arrival, Load, Shard};
use crate::results::breakdown::SecondSummary;
use crate::results::clock::ClockFacts;
use crate::results::hdr_codec::decode;
use crate::results::metric::Metric;
use crate::results::metric::Summary;
use crate::results::run::{steady_throughput, RunResult, TargetRun};
use crate::results::sessions::SessionsResult;
use crate::results::shards::{ShardRow, Shards};
use crate::results::validity::{generator_reasons, GeneratorTiming, RateTarget, Validity};

/// The merged result: the first shard's disclosure, the added run, and every shard's facts.
pub fn merged_result(shards: &[ShardResult], command: Vec<String>) -> anyhow::Result<RunResult> {
    let mut results: Vec<RunResult> = shards
        .iter()
        .map(|s| {
            serde_json::from_value(s.value.clone())
                .with_context(|| format!("{}: its run", name(&s.path)))
        })
        .collect::<anyhow::Result<_>>()?;
    let count = shards[0].count;
    let runs: Vec<&TargetRun> = results.iter().map(|r| &r.runs[0]).collect();
    let histograms = add_histograms(shards, &runs)?;
    let timeline = add_timelines(shards, &runs)?;
    let mut notes = Vec::new();
    let sessions = add_sessions(&runs)?;
    let mut added = added_run(&runs, histograms, timeline);
    let reasons = judged(shards, &results, &added, &mut notes);
    added.validity = Validity {
        valid: reasons.is_empty(),
        reasons,
    };
    let listed = shard_rows(shards, &results);
    let started_at = results
        .iter()
        .map(|r| r.envelope.started_at.clone())
        .min()
        .unwrap_or_default();
    // Invariant: `check::shards` returns at least one shard, each of one run.
    let mut merged = results.swap_remove(0);
    let mut run = merged.runs.swap_remove(0);
    left_to_the_shards(&mut run, &mut notes);
    carry(&mut run, added);
    run.sessions = sessions;
    merged.envelope.command = command;
    merged.envelope.started_at = started_at;
    merged.plan.shard = Shard::WHOLE;
    merged.valid = run.validity.valid;
    merged.runs = vec![run];
    merged.shards = Some(Shards {
        count,
        notes,
        merged: listed,
        thresholds: Vec::new(),
        absent: Vec::new(),
    });
    Ok(merged)
}

/// The shards' session tables added (each shard's sessions are its own: session i went to
/// shard i mod N), from their histograms.
fn add_sessions(runs: &[&TargetRun]) -> anyhow::Result<Option<SessionsResult>> {
    let mut sum: Option<SessionsResult> = None;
    for run in runs {
        let Some(theirs) = &run.sessions else {
            continue;
        };
        match &mut sum {
            Some(mine) => mine
                .add(theirs)
                .map_err(|e| anyhow::anyhow!("a shard's session table: {e}"))?,
            None => sum = Some(theirs.clone()),
        }
    }
    Ok(sum)
}

/// What the shards' runs add up to: the figures a merged run replaces of the first shard's.
struct Added {
    duration_s: f64,
    dispatch_window_s: f64,
    warmup_requests: u64,
    requests: u64,
    ok: u64,
    failed: u64,
    dispatched: u64,
    achieved_rate: f64,
    throughput: f64,
    completion_window_s: f64,
    errors: BTreeMap<String, u64>,
    connections_opened: u64,
    connections_reused: u64,
    generator_cpu_cores: f64,
    interrupted: bool,
    histograms: BTreeMap<Metric, Histogram<u64>>,
    timeline: Vec<SecondSummary>,
    validity: Validity,
    clock: ClockFacts,
}

fn added_run(
    runs: &[&TargetRun],
    histograms: BTreeMap<Metric, Histogram<u64>>,
    timeline: Vec<SecondSummary>,
) -> Added {
    let sum = |field: fn(&TargetRun) -> u64| -> u64 { runs.iter().map(|r| field(r)).sum() };
    let fsum = |field: fn(&TargetRun) -> f64| -> f64 { runs.iter().map(|r| field(r)).sum() };
    let fmax =
        |field: fn(&TargetRun) -> f64| -> f64 { runs.iter().map(|r| field(r)).fold(0.0, f64::max) };
    let duration_s = fmax(|r| r.duration_s).max(1e-9);
    let dispatch_window_s = fmax(|r| r.dispatch_window_s).max(duration_s);
    let dispatched = sum(|r| r.dispatched);
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for run in runs {
        for (kind, n) in &run.errors {
            *errors.entry(kind.clone()).or_default() += n;
        }
    }
    Added {
        duration_s,
        dispatch_window_s,
        warmup_requests: sum(|r| r.warmup_requests),
        requests: sum(|r| r.requests),
        ok: sum(|r| r.ok),
        failed: sum(|r| r.failed),
        dispatched,
        achieved_rate: dispatched as f64 / dispatch_window_s,
        // Each shard's goodput over its own completion span; the shards started together, so
        // their spans are one span and their goodputs add up.
        throughput: fsum(|r| r.throughput),
        completion_window_s: fmax(|r| r.completion_window_s),
        errors,
        connections_opened: sum(|r| r.connections_opened),
        connections_reused: sum(|r| r.connections_reused),
        generator_cpu_cores: fsum(|r| r.generator_cpu_cores),
        interrupted: runs.iter().any(|r| r.interrupted),
        histograms,
        timeline,
        validity: Validity {
            valid: true,
            reasons: Vec::new(),
        },
        clock: merged_clock(runs),
    }
}

/// Why the sum cannot be trusted: each shard's reasons, missing shards, the rules of a single
/// run on the sum (the plan's whole rate, all the shards' lag), and the shards' starts.
fn judged(
    shards: &[ShardResult],
    results: &[RunResult],
    added: &Added,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let count = shards[0].count;
    let runs: Vec<&TargetRun> = results.iter().map(|r| &r.runs[0]).collect();
    let mut reasons = Vec::new();
    for (shard, run) in shards.iter().zip(&runs) {
        for reason in &run.validity.reasons {
            reasons.push(format!("shard {}/{count}: {reason}", shard.index));
        }
    }
    if (shards.len() as u64) < count {
        reasons.push(format!(
            "only {} of {count} shards merged: the sum is not the plan's load",
            shards.len()
        ));
    }
    let target = match results[0].plan.load {
        Load::Open { rate, arrival } => Some(RateTarget::of(
            rate,
            arrival == Arrival::Poisson,
            added.duration_s,
        )),
        Load::Closed { .. } => None,
    };
    reasons.extend(generator_reasons(
        added.ok,
        added.achieved_rate,
        target,
        GeneratorTiming {
            lag: added.histograms.get(&Metric::ScheduleLag),
            send_delay: added.histograms.get(&Metric::SendDelay),
            build: added.histograms.get(&Metric::BuildTime),
        },
    ));
    let hosts: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|r| r.envelope.host.hostname.as_str())
        .collect();
    clock_checks(shards, &runs, hosts.len(), &mut reasons, notes);
    reasons
}

/// The first shard's run with every added or combined figure replaced.
fn carry(run: &mut TargetRun, added: Added) {
    run.duration_s = added.duration_s;
    run.dispatch_window_s = added.dispatch_window_s;
    run.warmup_requests = added.warmup_requests;
    run.requests = added.requests;
    run.ok = added.ok;
    run.failed = added.failed;
    run.dispatched = added.dispatched;
    run.success_rate = if added.requests == 0 {
        0.0
    } else {
        added.ok as f64 / added.requests as f64
    };
    run.achieved_rate = added.achieved_rate;
    run.throughput = added.throughput;
    run.completion_window_s = added.completion_window_s;
    run.steady_throughput = steady_throughput(&added.timeline);
    run.errors = added.errors;
    run.connections_opened = added.connections_opened;
    run.connections_reused = added.connections_reused;
    run.pinned_cores = Vec::new();
    run.generator_cpu_cores = added.generator_cpu_cores;
    run.interrupted = added.interrupted;
    run.metrics = added
        .histograms
        .iter()
        .map(|(m, h)| (m.name().to_string(), Summary::of(h)))
        .collect();
    run.histograms = added.histograms.into_iter().collect();
    run.per_second = None;
    run.timeline = added.timeline;
    run.validity = added.validity;
    run.upstream = None;
    run.clock = added.clock;
}

/// Kept as percentiles, not histograms, these cannot be added: each shard's own result has
/// them, and the merged one none rather than the first shard's alone.
fn left_to_the_shards(run: &mut TargetRun, notes: &mut Vec<String>) {
    let mut dropped = Vec::new();
    if !std::mem::take(&mut run.classes).is_empty() {
        dropped.push("per-class table");
    }
    if !std::mem::take(&mut run.stages).is_empty() {
        dropped.push("per-stage table");
    }
    let timed = run.connect.tcp_connect_us.take().is_some();
    run.connect.tls_handshake_us = None;
    if timed {
        dropped.push("connection timings");
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "the {} are in each shard's own result, not added here",
            dropped.join(" and ")
        ));
    }
    // Each host's own timer and answers: one shard's margin is not another's.
    let paced = run.pacer.take().is_some();
    if run.answer_poll.take().is_some() || paced {
        notes.push(
            "each shard's pacer (its margin and wake-ups) and answer polling are in its own result"
                .into(),
        );
    }
}

/// Each shard as the merged result lists it.
fn shard_rows(shards: &[ShardResult], results: &[RunResult]) -> Vec<ShardRow> {
    shards
        .iter()
        .zip(results)
        .map(|(s, r)| {
            let run = &r.runs[0];
            ShardRow {
                file: name(&s.path),
                index: s.index,
                command: r.envelope.command.clone(),
                host: r.envelope.host.clone(),
                started_at: r.envelope.started_at.clone(),
                threads: r.plan.threads,
                connections: r.plan.connections,
                target_resolved: run.target.resolved.to_string(),
                clock: run.clock.clone(),
                requests: run.requests,
                ok: run.ok,
                failed: run.failed,
                achieved_rate: run.achieved_rate,
                generator_cpu_cores: run.generator_cpu_cores,
                valid: run.validity.valid,
            }
        })
        .collect()
}

/// Each metric's histogram, added over the shards.
fn add_histograms(
    shards: &[ShardResult],
    runs: &[&TargetRun],
) -> anyhow::Result<BTreeMap<Metric, Histogram<u64>>> {
    let mut out: BTreeMap<Metric, Histogram<u64>> = BTreeMap::new();
    for (shard, run) in shards.iter().zip(runs) {
        if run.histograms.is_empty() {
            return Err(anyhow!(
                "{} carries no histograms (written by a loadgen before 0.1's merge?): it \
                 cannot be merged exactly",
                name(&shard.path)
            ));
        }
        for (metric, h) in &run.histograms {
            let sum = out.entry(*metric).or_insert_with(|| new_histogram(3));
            sum.add(h)
                .with_context(|| format!("{}: histogram {}", name(&shard.path), metric.name()))?;
        }
    }
    Ok(out)
}

/// The timelines added second by second (the shards started together, so their seconds align).
fn add_timelines(
    shards: &[ShardResult],
    runs: &[&TargetRun],
) -> anyhow::Result<Vec<SecondSummary>> {
    let mut seconds: BTreeMap<u64, (u64, Histogram<u64>)> = BTreeMap::new();
    for (shard, run) in shards.iter().zip(runs) {
        for s in &run.timeline {
            let h = decode(&s.response_time_histogram)
                .map_err(|e| anyhow!("{}: timeline second {}: {e}", name(&shard.path), s.second))?;
            let (errors, sum) = seconds
                .entry(s.second)
                .or_insert_with(|| (0, new_histogram(2)));
            *errors += s.errors;
            sum.add(&h)
                .with_context(|| format!("{}: timeline second {}", name(&shard.path), s.second))?;
        }
    }
    Ok(seconds
        .into_iter()
        .map(|(second, (errors, h))| SecondSummary::of(second, errors, &h))
        .collect())
}

/// The merged run's clock: the earliest start and the largest error of any shard.
fn merged_clock(runs: &[&TargetRun]) -> ClockFacts {
    ClockFacts {
        start_at: runs[0].clock.start_at.clone(),
        started_unix_us: runs
            .iter()
            .map(|r| r.clock.started_unix_us)
            .min()
            .unwrap_or(0),
        start_error_us: runs.iter().filter_map(|r| r.clock.start_error_us).max(),
        kernel: None,
        reference: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::recorder::Recorder;
    use crate::results::hdr_codec::encode;
    use crate::wire::outcome::{ErrorKind, Exchange};
    use serde_json::{json, Value};

    fn exchange(i: u64) -> Exchange {
        let due_ns = i * 1_000_000;
        Exchange {
            due_ns,
            dispatched_ns: due_ns + 3_000 + (i % 7) * 1_000,
            sent_ns: due_ns + 10_000,
            target_wait_ns: 2_000,
            done_ns: due_ns + 200_000 + (i % 97) * 37_000,
            first_byte_ns: Some(due_ns + 100_000 + (i % 13) * 5_000),
            first_output_ns: Some(due_ns + 110_000 + (i % 13) * 5_000),
            output_gaps_ns: vec![20_000 + (i % 5) * 1_000; 3],
            output_events: 4,
            usage_tokens: Some(4),
            stream: true,
            mock_times: None,
            tag: Default::default(),
            ..Exchange::default()
        }
    }

    /// What a shard's result holds of a recorder.
    fn shard(index: u64, count: u64, mut recorder: Recorder) -> ShardResult {
        let histograms: serde_json::Map<String, Value> = Metric::ALL
            .iter()
            .map(|m| (m.name().to_string(), json!(encode(recorder.histogram(*m)))))
            .collect();
        let failed = recorder.failed();
        ShardResult {
            path: format!("s{index}.json").into(),
            index,
            count,
            value: json!({
                "schema": crate::results::run::SCHEMA,
                "started_at": "2026-11-30T08:00:00Z",
                "host": {"hostname": "one", "cpu_model": "", "cores": 1, "kernel": "",
                    "memory_bytes": 0},
                "plan": {
                    "targets": [],
                    "load": {"mode": "open", "rate": 1000.0, "arrival": "constant"},
                    "connections": 1, "threads": 1,
                    "request": {"scenario": "chat", "stream": true, "body_crc32": 0,
                        "max_tokens": null},
                    "pace": {"pace": "steady"},
                    "timeout_us": 1, "max_pending": 1, "spin_us": 0, "seed": 0,
                    "shard": {"index": index, "count": count},
                },
                "valid": true,
                "runs": [{
                    "target": {"url": "http://gw:80/", "authority": "gw:80", "path": "/",
                        "resolved": "10.0.0.1:80"},
                    "scenario": "chat",
                    "success_rate": 1.0,
                    "achieved_rate": 0.0,
                    "throughput": 0.0,
                    "metrics": {},
                    "requests": recorder.ok + failed,
                    "ok": recorder.ok,
                    "failed": failed,
                    "dispatched": recorder.ok + failed,
                    "duration_s": 3.0,
                    "dispatch_window_s": 3.0,
                    "errors": recorder.errors.iter().map(|(k, n)| (k.key(), *n)).collect::<BTreeMap<_, _>>(),
                    "histograms": histograms,
                    "timeline": recorder.timeline_summary(),
                    "validity": {"valid": true, "reasons": []},
                    "clock": {"started_unix_us": 1, "start_error_us": 0},
                }],
            }),
        }
    }

    /// The merged result of `shards`, as its JSON.
    fn merge_of(shards: &[ShardResult]) -> Value {
        serde_json::to_value(merged_result(shards, vec![]).unwrap()).unwrap()
    }

    #[test]
    fn merged_shards_equal_one_recorder_of_every_request() {
        let mut one = Recorder::new(0);
        let mut shards: Vec<Recorder> = (0..3).map(|_| Recorder::new(0)).collect();
        for i in 0..3000u64 {
            let x = exchange(i);
            one.success(&x);
            shards[(i % 3) as usize].success(&x);
            if i % 101 == 0 {
                one.failure(ErrorKind::Timeout, x.due_ns, x.done_ns, Default::default());
                shards[(i % 3) as usize].failure(
                    ErrorKind::Timeout,
                    x.due_ns,
                    x.done_ns,
                    Default::default(),
                );
            }
        }
        let shards: Vec<ShardResult> = shards
            .into_iter()
            .enumerate()
            .map(|(i, r)| shard(i as u64, 3, r))
            .collect();
        let merged = merge_of(&shards);
        let run = &merged["runs"][0];
        assert_eq!(run["ok"], one.ok);
        assert_eq!(run["errors"]["timeout"], one.errors[&ErrorKind::Timeout]);
        for m in Metric::ALL {
            let h = decode(run["histograms"][m.name()].as_str().unwrap()).unwrap();
            assert_eq!(&h, one.histogram(m), "{}", m.name());
            assert_eq!(
                run["metrics"][m.name()],
                json!(Summary::of(one.histogram(m))),
                "{}",
                m.name()
            );
        }
        let timeline: Vec<SecondSummary> = serde_json::from_value(run["timeline"].clone()).unwrap();
        let expected = one.timeline_summary();
        assert_eq!(timeline.len(), expected.len());
        for (a, b) in timeline.iter().zip(&expected) {
            assert_eq!(
                (
                    a.second,
                    a.ok,
                    a.errors,
                    a.response_time_p50_us,
                    a.response_time_p99_us
                ),
                (
                    b.second,
                    b.ok,
                    b.errors,
                    b.response_time_p50_us,
                    b.response_time_p99_us
                )
            );
        }
        assert_eq!(run["achieved_rate"], 3000.0 / 3.0 + 30.0 / 3.0);
        assert_eq!(merged["valid"], true, "{merged}");
    }

    #[test]
    fn tables_that_cannot_be_added_are_left_to_the_shards_and_said_so() {
        let mut shards: Vec<ShardResult> = (0..2)
            .map(|i| {
                let mut r = Recorder::new(0);
                r.success(&exchange(i));
                shard(i, 2, r)
            })
            .collect();
        for shard in &mut shards {
            let run = &mut shard.value["runs"][0];
            let summary = |p50: u64| {
                json!(Summary::of(&{
                    let mut h = new_histogram(3);
                    h.record(p50).unwrap();
                    h
                }))
            };
            run["classes"] = json!([{"name": "short", "requests": 1, "errors": 0,
                "response_time": summary(900), "mean_body_bytes": 10.0,
                "mean_prompt_tokens": 2.0}]);
            run["connect"] = json!({"protocol": "HTTP/2", "tls": true,
                "tcp_connect_us": summary(40), "tls_handshake_us": summary(700)});
        }
        for shard in &mut shards {
            let run = &mut shard.value["runs"][0];
            run["pacer"] = json!({"spin": "auto", "margin_us": 60.0, "widest_margin_us": 80.0,
                "wakeups": 10, "lateness_p50_us": 30.0, "lateness_p99_us": 50.0,
                "lateness_max_us": 70.0, "late_wakeups": 0, "spun_s": 0.1});
            run["answer_poll"] = json!({"budget_cores": 1.0, "polled_s": 0.1});
        }
        let merged = merge_of(&shards);
        let run = &merged["runs"][0];
        assert!(run.get("classes").is_none());
        assert!(
            run["pacer"].is_null() && run["answer_poll"].is_null(),
            "{run}"
        );
        assert_eq!(run["connect"], json!({"protocol": "HTTP/2", "tls": true}));
        let notes = merged["shards"]["notes"].to_string();
        assert!(
            notes.contains("per-class table and connection timings are in each shard's own result"),
            "{notes}"
        );
        assert!(notes.contains("pacer (its margin"), "{notes}");
    }

    #[test]
    fn shards_that_started_apart_are_not_the_plan() {
        let mut shards: Vec<ShardResult> = (0..2)
            .map(|i| {
                let mut r = Recorder::new(0);
                r.success(&exchange(i));
                shard(i, 2, r)
            })
            .collect();
        shards[1].value["runs"][0]["clock"]["started_unix_us"] = json!(50_001);
        let merged = merge_of(&shards);
        let reasons = merged["runs"][0]["validity"]["reasons"].to_string();
        assert!(
            reasons.contains("starts spread over 50.0 ms by their own clocks"),
            "{reasons}"
        );
        assert_eq!(merged["valid"], false);

        // The second host's clock is 50 ms ahead of the reference, the first's is right: on
        // the reference's clock they started together.
        let reference =
            |offset: i64| json!({"url": "http://ref", "offset_us": offset, "error_us": 150});
        shards[0].value["runs"][0]["clock"]["reference"] = reference(0);
        shards[1].value["runs"][0]["clock"]["reference"] = reference(-50_000);
        let merged = merge_of(&shards);
        let reasons = merged["runs"][0]["validity"]["reasons"].to_string();
        assert!(!reasons.contains("spread"), "{reasons}");
        // Both clocks right, yet the second started 50 ms late by the reference.
        shards[1].value["runs"][0]["clock"]["reference"] = reference(0);
        let merged = merge_of(&shards);
        let reasons = merged["runs"][0]["validity"]["reasons"].to_string();
        assert!(reasons.contains("on the clock of http://ref"), "{reasons}");
    }
}
