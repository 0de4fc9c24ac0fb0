//! Adding the shards' runs: counters summed, histograms added (per metric and per second of the
//! timeline), the achieved rate over the whole schedule, and the judgement made again on the sum.

use std::collections::BTreeMap;

use anyhow::{anyhow, Context as _};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::check::ShardResult;
use super::name;
use crate::generator::recorder::{new_histogram, SecondSummary};
use crate::generator::start_at::ClockFacts;
use crate::results::hdr_codec::{decode, encode};
use crate::results::run::{
    generator_reasons, steady_throughput, GeneratorTiming, RateTarget, Summary, Validity,
};

/// Largest spread of the shards' starts (each by its own clock) for their sum to be the plan's
/// schedule: a millisecond is five slots at 5,000 req/s.
const MAX_START_SPREAD_US: i64 = 10_000;

/// What merging reads of each shard's run: the counters it adds, the figures it combines and
/// the facts it judges (a figure a result leaves out counts as zero, as it always has). The rest
/// of the first shard's run is carried over as written.
#[derive(Debug, Deserialize)]
struct ShardRun {
    requests: u64,
    ok: u64,
    failed: u64,
    dispatched: u64,
    #[serde(default)]
    warmup_requests: u64,
    #[serde(default)]
    duration_s: f64,
    #[serde(default)]
    dispatch_window_s: f64,
    #[serde(default)]
    throughput: f64,
    #[serde(default)]
    completion_window_s: f64,
    #[serde(default)]
    errors: BTreeMap<String, u64>,
    #[serde(default)]
    connections_opened: u64,
    #[serde(default)]
    connections_reused: u64,
    #[serde(default)]
    generator_cpu_cores: f64,
    #[serde(default)]
    interrupted: bool,
    #[serde(default)]
    achieved_rate: f64,
    validity: ShardValidity,
    #[serde(default)]
    histograms: BTreeMap<String, String>,
    #[serde(default)]
    timeline: Vec<SecondSummary>,
    #[serde(default)]
    clock: ClockFacts,
    #[serde(default)]
    target: ShardTarget,
}

#[derive(Debug, Deserialize)]
struct ShardValidity {
    valid: bool,
    #[serde(default)]
    reasons: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ShardTarget {
    resolved: String,
}

/// What a merged run replaces of the first shard's run.
#[derive(Debug, Serialize)]
struct MergedRun {
    duration_s: f64,
    dispatch_window_s: f64,
    warmup_requests: u64,
    requests: u64,
    ok: u64,
    failed: u64,
    dispatched: u64,
    success_rate: f64,
    achieved_rate: f64,
    throughput: f64,
    completion_window_s: f64,
    steady_throughput: Option<f64>,
    errors: BTreeMap<String, u64>,
    connections_opened: u64,
    connections_reused: u64,
    pinned_cores: [usize; 0],
    generator_cpu_cores: f64,
    interrupted: bool,
    metrics: BTreeMap<String, Summary>,
    histograms: BTreeMap<String, String>,
    timeline: Vec<SecondSummary>,
    validity: Validity,
    upstream: Option<()>,
    clock: ClockFacts,
}

/// Each shard as the merged result lists it.
#[derive(Debug, Serialize)]
struct MergedShard<'a> {
    file: String,
    index: u64,
    command: &'a Value,
    host: &'a Value,
    started_at: &'a Value,
    threads: &'a Value,
    connections: &'a Value,
    target_resolved: &'a str,
    clock: &'a ClockFacts,
    requests: u64,
    ok: u64,
    failed: u64,
    achieved_rate: f64,
    generator_cpu_cores: f64,
    valid: bool,
}

/// The merged result: the first shard's disclosure, the added run, and every shard's facts.
pub fn merged_result(shards: &[ShardResult], command: Vec<String>) -> anyhow::Result<Value> {
    let first = &shards[0].value;
    let count = shards[0].count;
    let runs: Vec<ShardRun> = shards
        .iter()
        .map(|s| {
            serde_json::from_value(s.value["runs"][0].clone())
                .with_context(|| format!("{}: its run", name(&s.path)))
        })
        .collect::<anyhow::Result<_>>()?;

    let sum = |field: fn(&ShardRun) -> u64| -> u64 { runs.iter().map(field).sum() };
    let fsum = |field: fn(&ShardRun) -> f64| -> f64 { runs.iter().map(field).sum() };
    let fmax = |field: fn(&ShardRun) -> f64| -> f64 { runs.iter().map(field).fold(0.0, f64::max) };
    let (requests, ok, failed, dispatched) = (
        sum(|r| r.requests),
        sum(|r| r.ok),
        sum(|r| r.failed),
        sum(|r| r.dispatched),
    );
    let duration_s = fmax(|r| r.duration_s).max(1e-9);
    let dispatch_window_s = fmax(|r| r.dispatch_window_s).max(duration_s);
    let achieved_rate = dispatched as f64 / dispatch_window_s;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for run in &runs {
        for (kind, n) in &run.errors {
            *errors.entry(kind.clone()).or_default() += n;
        }
    }

    let histograms = add_histograms(shards, &runs)?;
    let timeline = add_timelines(shards, &runs)?;

    let mut reasons = Vec::new();
    let mut notes = Vec::new();
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
    // The rules of a single run, on the sum: the plan's whole rate, all the shards' lag.
    reasons.extend(generator_reasons(
        ok,
        achieved_rate,
        first["plan"]["load"]["rate"].as_f64().map(|rate| {
            let poisson = first["plan"]["load"]["arrival"].as_str() == Some("poisson");
            RateTarget::of(rate, poisson, duration_s)
        }),
        GeneratorTiming {
            lag: histograms.get("schedule_lag"),
            send_delay: histograms.get("send_delay"),
        },
    ));
    clock_checks(shards, &runs, &mut reasons, &mut notes);

    let valid = reasons.is_empty();
    let merged_run = MergedRun {
        duration_s,
        dispatch_window_s,
        warmup_requests: sum(|r| r.warmup_requests),
        requests,
        ok,
        failed,
        dispatched,
        success_rate: if requests == 0 {
            0.0
        } else {
            ok as f64 / requests as f64
        },
        achieved_rate,
        // Each shard's goodput over its own completion span; the shards started together, so
        // their spans are one span and their goodputs add up.
        throughput: fsum(|r| r.throughput),
        completion_window_s: fmax(|r| r.completion_window_s),
        steady_throughput: steady_throughput(&timeline),
        errors,
        connections_opened: sum(|r| r.connections_opened),
        connections_reused: sum(|r| r.connections_reused),
        pinned_cores: [],
        generator_cpu_cores: fsum(|r| r.generator_cpu_cores),
        interrupted: runs.iter().any(|r| r.interrupted),
        metrics: histograms
            .iter()
            .map(|(m, h)| (m.clone(), Summary::of(h)))
            .collect(),
        histograms: histograms
            .iter()
            .map(|(m, h)| (m.clone(), encode(h)))
            .collect(),
        timeline,
        validity: Validity { valid, reasons },
        upstream: None,
        clock: merged_clock(&runs),
    };
    // The first shard's run, with every added or combined figure replaced.
    let mut run = first["runs"][0].clone();
    for (key, value) in json!(merged_run).as_object().into_iter().flatten() {
        run[key] = value.clone();
    }
    // Kept as percentiles, not histograms, these cannot be added: each shard's own result
    // has them, and the merged one none rather than the first shard's alone.
    let mut dropped = Vec::new();
    if let Some(object) = run.as_object_mut() {
        for (key, what) in [
            ("classes", "per-class table"),
            ("stages", "per-stage table"),
        ] {
            if object.remove(key).is_some() {
                dropped.push(what.to_string());
            }
        }
    }
    if let Some(connect) = run.get_mut("connect").and_then(Value::as_object_mut) {
        let timed = connect.remove("tcp_connect_us").is_some();
        connect.remove("tls_handshake_us");
        if timed {
            dropped.push("connection timings".into());
        }
    }
    if !dropped.is_empty() {
        notes.push(format!(
            "the {} are in each shard's own result, not added here",
            dropped.join(" and ")
        ));
    }

    let mut merged = first.clone();
    merged["command"] = json!(command);
    merged["started_at"] = runs_min(shards, "started_at");
    merged["plan"]["shard"] = json!({"index": 0, "count": 1});
    merged["runs"] = json!([run]);
    merged["valid"] = json!(valid);
    let listed: Vec<MergedShard> = shards
        .iter()
        .zip(&runs)
        .map(|(s, r)| MergedShard {
            file: name(&s.path),
            index: s.index,
            command: &s.value["command"],
            host: &s.value["host"],
            started_at: &s.value["started_at"],
            threads: &s.value["plan"]["threads"],
            connections: &s.value["plan"]["connections"],
            target_resolved: &r.target.resolved,
            clock: &r.clock,
            requests: r.requests,
            ok: r.ok,
            failed: r.failed,
            achieved_rate: r.achieved_rate,
            generator_cpu_cores: r.generator_cpu_cores,
            valid: r.validity.valid,
        })
        .collect();
    merged["shards"] = json!({"count": count, "notes": notes, "merged": listed});
    Ok(merged)
}

/// The earliest of the shards' `started_at` (RFC 3339 strings order as times).
fn runs_min(shards: &[ShardResult], field: &str) -> Value {
    shards
        .iter()
        .filter_map(|s| s.value[field].as_str())
        .min()
        .map_or(Value::Null, |t| json!(t))
}

/// Each metric's histogram, added over the shards.
fn add_histograms(
    shards: &[ShardResult],
    runs: &[ShardRun],
) -> anyhow::Result<BTreeMap<String, Histogram<u64>>> {
    let mut out: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for (shard, run) in shards.iter().zip(runs) {
        let encoded = Some(&run.histograms)
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                anyhow!(
                    "{} carries no histograms (written by a loadgen before 0.1's merge?): it \
                     cannot be merged exactly",
                    name(&shard.path)
                )
            })?;
        for (metric, text) in encoded {
            let h = decode(text)
                .map_err(|e| anyhow!("{}: histogram {metric}: {e}", name(&shard.path)))?;
            match out.get_mut(metric) {
                Some(sum) => sum
                    .add(&h)
                    .with_context(|| format!("{}: histogram {metric}", name(&shard.path)))?,
                None => {
                    let mut sum = new_histogram(3);
                    sum.add(&h)
                        .with_context(|| format!("{}: histogram {metric}", name(&shard.path)))?;
                    out.insert(metric.clone(), sum);
                }
            }
        }
    }
    Ok(out)
}

/// The timelines added second by second (the shards started together, so their seconds align).
fn add_timelines(shards: &[ShardResult], runs: &[ShardRun]) -> anyhow::Result<Vec<SecondSummary>> {
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
fn merged_clock(runs: &[ShardRun]) -> ClockFacts {
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

/// Did the shards start together? Judged by each one's clock, and by what its kernel says of
/// that clock.
fn clock_checks(
    shards: &[ShardResult],
    runs: &[ShardRun],
    reasons: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    // On the reference's clock when every shard measured the same one; on their own otherwise.
    let reference = |r: &ShardRun| -> Option<(i64, i64, String)> {
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
    if let Some(r) = one_reference {
        let error = r.iter().map(|(_, e, _)| *e).max().unwrap_or(0);
        if error > MAX_START_SPREAD_US {
            notes.push(format!(
                "a shard's offset to the reference is known only to within {:.1} ms (half its \
                 shortest round trip): the starts compared on the reference are that uncertain",
                error as f64 / 1e3
            ));
        }
        return;
    }
    let hosts: std::collections::BTreeSet<&str> = shards
        .iter()
        .filter_map(|s| s.value["host"]["hostname"].as_str())
        .collect();
    if hosts.len() < 2 {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::recorder::{Metric, Recorder};
    use crate::wire::outcome::{ErrorKind, Exchange};

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
                "started_at": "2026-11-30T08:00:00Z",
                "plan": {"load": {"mode": "open", "rate": 1000.0}, "shard": {"index": index, "count": count}},
                "host": {"hostname": "one"},
                "runs": [{
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
        let merged = merged_result(&shards, vec![]).unwrap();
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
            run["classes"] = json!([{"name": "short"}]);
            run["connect"] = json!({"protocol": "HTTP/2", "tls": true,
                "tcp_connect_us": {"p50": 40}, "tls_handshake_us": {"p50": 700}});
        }
        let merged = merged_result(&shards, vec![]).unwrap();
        let run = &merged["runs"][0];
        assert!(run.get("classes").is_none());
        assert_eq!(run["connect"], json!({"protocol": "HTTP/2", "tls": true}));
        let notes = merged["shards"]["notes"].to_string();
        assert!(
            notes.contains("per-class table and connection timings are in each shard's own result"),
            "{notes}"
        );
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
        let merged = merged_result(&shards, vec![]).unwrap();
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
        let merged = merged_result(&shards, vec![]).unwrap();
        let reasons = merged["runs"][0]["validity"]["reasons"].to_string();
        assert!(!reasons.contains("spread"), "{reasons}");
        // Both clocks right, yet the second started 50 ms late by the reference.
        shards[1].value["runs"][0]["clock"]["reference"] = reference(0);
        let merged = merged_result(&shards, vec![]).unwrap();
        let reasons = merged["runs"][0]["validity"]["reasons"].to_string();
        assert!(reasons.contains("on the clock of http://ref"), "{reasons}");
    }
}
