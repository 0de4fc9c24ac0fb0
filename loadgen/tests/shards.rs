//! Shards on one machine: N `loadgen run --shard I/N` processes with one `--start-at`, against
//! one mock on loopback, merged by `loadgen merge`. The merge must lose nothing: counts add up
//! to the plan's schedule, the merged rate is the plan's, and the merged histograms are exactly
//! the sum of every shard's (read three ways: the results, the interval logs, the merged log).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use loadgen::results::hdr_codec::decode;
use mock_upstream::{Config, MockServer};
use serde_json::Value;

mod common;

use common::{loadgen, precision_run, read_result as json, temp_dir};

const SHARDS: u64 = 3;
const RATE: u64 = 600;
const SECONDS: u64 = 2;

fn histogram(text: &Value) -> Histogram<u64> {
    decode(text.as_str().unwrap()).unwrap()
}

/// Requests the mock saw on its streaming chat route.
fn mock_requests(mock: &MockServer) -> u64 {
    let mut stream = std::net::TcpStream::connect(mock.local_addr()).unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("mock_requests_total{route=\"chat_stream\"} "))
        .map_or(0, |n| n.trim().parse().unwrap())
}

fn start_at(ahead: Duration) -> String {
    humantime::format_rfc3339_millis(SystemTime::now() + ahead).to_string()
}

/// Runs the shards together and returns the directory of their results and logs.
fn run_shards(mock: &MockServer, dir: &Path) -> Vec<Output> {
    let target = format!("http://{}/v1/chat/completions", mock.local_addr());
    // Far enough ahead for every process to be up on a loaded machine.
    let at = start_at(Duration::from_secs(4));
    let children: Vec<_> = (0..SHARDS)
        .map(|i| {
            // The last shard prints its result as a container would (`--out -`).
            let out = if i == SHARDS - 1 {
                "-".into()
            } else {
                dir.join(format!("shard-{i}.json"))
            };
            loadgen()
                .args(["run", "--quiet", "--target", &target])
                .args(["--rate", &RATE.to_string(), "--duration", "2s"])
                .args(["--scenario", "chat-stream", "--max-tokens", "4"])
                .args(["--connections", "16", "--timeout", "10s"])
                .args(["--shard", &format!("{i}/{SHARDS}"), "--start-at", &at])
                .args(["--clock-ref", &format!("http://{}", mock.local_addr())])
                .arg("--out")
                .arg(out)
                .arg("--hdr-log")
                .arg(dir.join(format!("logs-{i}")))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

#[test]
fn shards_started_together_merge_into_the_whole_plan_without_loss() {
    let mock = MockServer::start(Config::loopback()).unwrap();
    let dir = temp_dir("merge");
    let before = mock_requests(&mock);
    let outputs = run_shards(&mock, &dir);
    for out in &outputs {
        // 0: valid; 1: a shard judged its own timing too loose on a loaded machine. Either
        // way its counts must add up.
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    }
    let report = String::from_utf8_lossy(&outputs[0].stdout);
    for expected in [
        "shard 0/3 of the schedule",
        "from the reference",
        "started at",
    ] {
        assert!(report.contains(expected), "{expected}: {report}");
    }
    // The last shard's log as `kubectl logs` shows it: its report (standard error) and its
    // result (one JSON line on standard output) together.
    let last = outputs.last().unwrap();
    assert_eq!(String::from_utf8_lossy(&last.stdout).lines().count(), 1);
    let mut log = last.stderr.clone();
    log.extend_from_slice(&last.stdout);
    log.extend_from_slice(b"a last line of something else\n");
    std::fs::write(dir.join(format!("shard-{}.log", SHARDS - 1)), &log).unwrap();
    let shards: Vec<Value> = (0..SHARDS)
        .map(|i| match i {
            i if i == SHARDS - 1 => serde_json::from_slice(&last.stdout).unwrap(),
            i => json(&dir.join(format!("shard-{i}.json"))),
        })
        .collect();
    let per_shard = RATE * SECONDS / SHARDS;
    for (i, shard) in shards.iter().enumerate() {
        assert_eq!(shard["plan"]["shard"]["index"], i as u64);
        let run = &shard["runs"][0];
        // Every third slot of the 1,200 in the window, due before its end.
        assert_eq!(run["requests"], per_shard, "shard {i}");
        assert_eq!(run["dispatched"], per_shard, "shard {i}");
        let clock = &run["clock"];
        assert_eq!(clock["start_at"], shard["plan"]["start_at"]);
        assert!(
            clock["start_error_us"].as_i64().unwrap().abs() < 1_000_000,
            "{clock}"
        );
        assert!(clock["kernel"].is_object(), "{clock}");
        // One host, one clock: the offset to the mock's is within its error (and the
        // scheduler's noise).
        let reference = &clock["reference"];
        let (offset, error) = (
            reference["offset_us"].as_i64().unwrap(),
            reference["error_us"].as_i64().unwrap(),
        );
        assert!(offset.abs() <= error + 5_000, "{reference}");
    }
    // The shards together sent the plan's schedule, and nothing else.
    assert_eq!(mock_requests(&mock) - before, RATE * SECONDS);

    let merged_path = dir.join("merged.json");
    let out = loadgen()
        .arg("merge")
        .args(shard_files(&dir))
        .arg("--out")
        .arg(&merged_path)
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let plain_exit = out.status.code();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("## Shards"), "{report}");
    let merged = json(&merged_path);
    let run = &merged["runs"][0];
    let page = loadgen()
        .args(["report", "--format", "html"])
        .arg(&merged_path)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&page.stdout).contains("<h2>Shards</h2>"));

    // Counts are the sums.
    let sum = |field: &str| -> u64 {
        shards
            .iter()
            .map(|s| s["runs"][0][field].as_u64().unwrap())
            .sum()
    };
    for field in ["requests", "ok", "failed", "dispatched", "warmup_requests"] {
        assert_eq!(run[field].as_u64().unwrap(), sum(field), "{field}");
    }
    assert_eq!(run["requests"], RATE * SECONDS);
    // The merged rate is the plan's, not a shard's; how close each shard kept to its share of
    // it is the host's pace, so the precision run's.
    let achieved = run["achieved_rate"].as_f64().unwrap();
    assert!(
        !precision_run() || (achieved - RATE as f64).abs() <= RATE as f64 * 0.01,
        "{achieved}"
    );
    assert_eq!(merged["shards"]["merged"].as_array().unwrap().len(), 3);
    assert_eq!(merged["plan"]["shard"]["count"], 1);

    // Every metric's merged histogram is the sum of the shards' histograms, and so are the
    // intervals of all the shards' logs: one process recording every request would hold the
    // same histogram, so it would report the same percentiles.
    let metrics = run["histograms"].as_object().unwrap();
    assert!(metrics.contains_key("ttft") && metrics.contains_key("itl"));
    for (metric, text) in metrics {
        let merged_h = histogram(text);
        let mut from_results = loadgen::generator::histogram::new_histogram(3);
        let mut from_logs = loadgen::generator::histogram::new_histogram(3);
        for (i, shard) in shards.iter().enumerate() {
            from_results
                .add(histogram(&shard["runs"][0]["histograms"][metric]))
                .unwrap();
            let log = dir.join(format!("logs-{i}/1-chat-stream.{metric}.hlog"));
            let bytes = std::fs::read(&log).unwrap();
            for interval in loadgen::commands::merge::logs::read(&log, &bytes)
                .unwrap()
                .intervals
            {
                from_logs.add(interval.2).unwrap();
            }
        }
        assert_eq!(merged_h, from_results, "{metric}");
        assert_eq!(merged_h, from_logs, "{metric}");
        let summary = &run["metrics"][metric];
        assert_eq!(summary["count"], from_logs.len(), "{metric}");
        for (key, q) in [("p50", 0.5), ("p99", 0.99), ("p999", 0.999)] {
            assert_eq!(
                summary[key],
                from_logs.value_at_quantile(q),
                "{metric} {key}"
            );
        }
        assert_eq!(summary["max"], from_logs.max(), "{metric}");
    }
    // The merged timeline counts every success once.
    let timeline_ok: u64 = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ok"].as_u64().unwrap())
        .sum();
    assert_eq!(timeline_ok, run["ok"].as_u64().unwrap());

    // The logs merge too, into one log whose intervals add up to the merged histogram.
    let merged_log = dir.join("response_time.hlog");
    let mut merge = loadgen();
    merge.arg("merge");
    for i in 0..SHARDS {
        merge.arg(dir.join(format!("logs-{i}/1-chat-stream.response_time.hlog")));
    }
    let out = merge.arg("--out").arg(&merged_log).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let bytes = std::fs::read(&merged_log).unwrap();
    let log = loadgen::commands::merge::logs::read(&merged_log, &bytes).unwrap();
    let mut total = loadgen::generator::histogram::new_histogram(3);
    let mut starts = Vec::new();
    for (start, _, h) in log.intervals {
        starts.push(start);
        total.add(h).unwrap();
    }
    assert_eq!(total, histogram(&run["histograms"]["response_time"]));
    // One interval per second, the shards' same seconds added into one.
    starts.dedup();
    assert!(
        starts.windows(2).all(|w| w[1] - w[0] == 1_000_000),
        "{starts:?}"
    );

    thresholds(&dir, plain_exit);
    refusals(&dir);
}

/// Thresholds on the merged run: met ones change nothing, one the whole run fails exits 1 and
/// names it, bad ones are refused before any file is read, and logs take none.
fn thresholds(dir: &Path, plain_exit: Option<i32>) {
    let merge = |extra: &[&str]| {
        loadgen()
            .arg("merge")
            .args(shard_files(dir))
            .args(["--out", "-"])
            .args(extra)
            .output()
            .unwrap()
    };
    let met = merge(&["--slo", "p99<60s,errors<100%", "--max-p99", "60s"]);
    assert_eq!(met.status.code(), plain_exit, "{met:?}");
    let merged: Value = serde_json::from_slice(&met.stdout).unwrap();
    let judged = merged["shards"]["thresholds"].as_array().unwrap();
    assert_eq!(judged.len(), 3, "{judged:?}");
    assert!(judged.iter().all(|j| j["met"] == true), "{judged:?}");
    assert!(!String::from_utf8_lossy(&met.stderr).contains("loadgen: merge:"));

    let failed = merge(&["--max-p99", "1us"]);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(
        err.contains("response_time p99 <= 1us (--max-p99)"),
        "{err}"
    );
    assert!(err.contains("Thresholds on the merged run"), "{err}");

    let bad = merge(&["--max-p99", "soon"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--max-p99"));
    let logs = loadgen()
        .arg("merge")
        .arg(dir.join("logs-0/1-chat-stream.ttft.hlog"))
        .args(["--slo", "p99<1s"])
        .output()
        .unwrap();
    assert_eq!(logs.status.code(), Some(2), "{logs:?}");
    assert!(String::from_utf8_lossy(&logs.stderr).contains("not interval logs"));
}

/// Each shard's result file: JSON, but the last one's is its container log.
fn shard_files(dir: &Path) -> Vec<PathBuf> {
    (0..SHARDS)
        .map(|i| match i {
            i if i == SHARDS - 1 => dir.join(format!("shard-{i}.log")),
            i => dir.join(format!("shard-{i}.json")),
        })
        .collect()
}

/// Shards of another plan, twice the same shard, and missing shards are refused (exit 2) with
/// a message that names the files; `--partial` merges what is there, marked invalid.
fn refusals(dir: &Path) {
    let files = shard_files(dir);
    let shard = |i: u64| files[i as usize].clone();
    let mut other = json(&shard(1));
    other["plan"]["shard"]["index"] = 2.into();
    other["plan"]["load"]["rate"] = 900.0.into();
    let other_path = dir.join("other-plan.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let cases: [(Vec<PathBuf>, &str); 4] = [
        (
            vec![shard(0), shard(1), other_path.clone()],
            "is not from the same plan as",
        ),
        (vec![shard(0), shard(0), shard(1)], "are both shard 0/3"),
        (vec![shard(0), shard(2)], "missing 1"),
        (
            vec![shard(0), dir.join("logs-0/1-chat-stream.ttft.hlog")],
            "cannot merge JSON results with interval logs",
        ),
    ];
    for (inputs, expected) in cases {
        let out = loadgen().arg("merge").args(&inputs).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{inputs:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{inputs:?}: {err}");
    }
    let err = String::from_utf8_lossy(
        &loadgen()
            .arg("merge")
            .args([shard(0), shard(1), other_path])
            .output()
            .unwrap()
            .stderr,
    )
    .to_string();
    assert!(err.contains("load"), "{err}");
    let out = loadgen()
        .args(["merge", "--partial", "--out", "-"])
        .args([shard(0), shard(2)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let partial: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(partial["valid"], false);
    let reasons = partial["runs"][0]["validity"]["reasons"].to_string();
    assert!(reasons.contains("only 2 of 3 shards"), "{reasons}");
}

#[test]
fn shard_options_that_cannot_work_are_refused_before_any_load() {
    let past =
        humantime::format_rfc3339_seconds(SystemTime::now() - Duration::from_secs(60)).to_string();
    let target = "http://127.0.0.1:9/v1/chat/completions";
    let not_a_mock = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target_ok = format!(
        "http://{}/v1/chat/completions",
        not_a_mock.local_addr().unwrap()
    );
    // A reference that is not a gatebench mock's clock: the listener never answers.
    let out = loadgen()
        .args(["run", "--target", &target_ok, "--clock-ref", &target_ok])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no gatebench mock's clock answers"), "{err}");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--target", target, "--shard", "3/3"],
            "invalid --shard '3/3'",
        ),
        (
            &["--target", target, "--shard", "0/2", "--concurrency", "4"],
            "closed loop",
        ),
        (
            &[
                "--target",
                target,
                "--shard",
                "0/2",
                "--upstream-metrics",
                "http://127.0.0.1:9",
            ],
            "other shards",
        ),
        (&["--shard", "0/2"], "exactly one --target"),
        (&["--target", target, "--start-at", "soon"], "RFC 3339"),
        (&["--target", target, "--start-at", &past], "in the past"),
    ];
    for (args, expected) in cases {
        let out = loadgen().arg("run").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

/// libfaketime's multi-threaded library, which shifts a process's wall clock (not its
/// monotonic clock); `scripts/test.sh` installs it (Debian's `faketime`).
fn libfaketime() -> Option<&'static str> {
    [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/faketime/libfaketimeMT.so.1",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
}

#[test]
fn a_host_whose_clock_is_off_starts_off_and_the_reference_clock_shows_it() {
    if std::env::var_os("GATEBENCH_SKIP_SDK").is_some() {
        eprintln!("GATEBENCH_SKIP_SDK is set: skipping the libfaketime test");
        return;
    }
    let faketime = libfaketime()
        .expect("libfaketime is missing: apt-get install faketime (or set GATEBENCH_SKIP_SDK=1)");
    let mock = MockServer::start(Config::loopback()).unwrap();
    let dir = temp_dir("clock");
    let base = format!("http://{}", mock.local_addr());
    let at = start_at(Duration::from_secs(4));
    let children: Vec<_> = (0..2)
        .map(|i| {
            let mut cmd = loadgen();
            cmd.args(["run", "--quiet", "--target", &base])
                .args(["--rate", "200", "--duration", "1s"])
                .args(["--shard", &format!("{i}/2"), "--start-at", &at])
                .args(["--clock-ref", &base])
                .arg("--out")
                .arg(dir.join(format!("shard-{i}.json")))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if i == 1 {
                // This host's wall clock runs 50 ms ahead of everyone else's.
                cmd.env("LD_PRELOAD", faketime)
                    .env("FAKETIME", "+0.05")
                    .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            }
            cmd.spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    }
    let clock = |i: u64| json(&dir.join(format!("shard-{i}.json")))["runs"][0]["clock"].clone();
    // How late a process wakes for its start is the host's: within a second on any host, within
    // 5 ms in the precision run.
    let start_error_us = if precision_run() { 5_000 } else { 1_000_000 };
    for (i, expected_offset) in [(0, 0), (1, -50_000)] {
        let clock = clock(i);
        // By its own clock, each shard started on time.
        assert!(
            clock["start_error_us"].as_i64().unwrap().abs() < start_error_us,
            "{clock}"
        );
        // The reference sees the one that is off.
        let reference = &clock["reference"];
        let offset = reference["offset_us"].as_i64().unwrap();
        let error = reference["error_us"].as_i64().unwrap();
        assert!(
            (offset - expected_offset).abs() <= error + 5_000,
            "shard {i}: {reference}"
        );
    }
    let out = loadgen()
        .args(["merge", "--out", "-"])
        .arg(dir.join("shard-0.json"))
        .arg(dir.join("shard-1.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reasons = merged["runs"][0]["validity"]["reasons"].to_string();
    assert!(
        reasons.contains("starts spread over")
            && reasons.contains(&format!("on the clock of {base}")),
        "{reasons}"
    );
}
