//! Workloads beyond one body at one rate: request corpora, recorded traces and ramps, checked
//! at an upstream that records what it was sent and when.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gatebench_tests::precision_run;
use gatebench_tests::recording::{start_recording, Seen};
use loadgen::commands::run::run;
use loadgen::LoadArgs;

use gatebench_tests::load_args::args;
use gatebench_tests::schema::assert_matches;

/// A file in the temporary directory, removed when dropped.
struct Temp(PathBuf);

impl Temp {
    fn new(name: &str, text: &str) -> Temp {
        let path = std::env::temp_dir().join(format!("gatebench-{name}-{}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        Temp(path)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What the upstream saw of the load, by sequence number (loadgen's probe of whether the
/// target is a gatebench mock carries none).
fn by_seq(seen: &[Seen]) -> BTreeMap<u64, Seen> {
    seen.iter()
        .filter_map(|s| Some((s.seq?, s.clone())))
        .collect()
}

#[test]
fn a_corpus_reaches_the_upstream_byte_for_byte_in_file_order() {
    let (addr, log) = start_recording();
    // 40 lines: bodies from 100 bytes to 40 KB, two classes, one with its own route.
    let mut lines = Vec::new();
    for i in 0..40u64 {
        let text = "x".repeat((100 + i * 1_000) as usize);
        let body = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": i + 1});
        let line = if i % 10 == 3 {
            serde_json::json!({"route": "/v1/other", "class": "routed", "body": body})
        } else {
            serde_json::json!({"class": if i < 20 { "small" } else { "large" }, "body": body})
        };
        lines.push(line);
    }
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let file = Temp::new("corpus.jsonl", &(text.join("\n") + "\n"));
    let (result, _) = run(
        LoadArgs {
            rate: Some("200".into()),
            duration: Some("1s".into()),
            requests_file: Some(file.0.clone()),
            requests_order: Some("sequential".into()),
            ..args(format!("http://{addr}/v1/chat/completions"))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    // What is checked is what reached the upstream; the run's validity (its generator lag, on a
    // machine loaded by the other tests) is not what this test is about.
    assert_eq!((r.requests, r.ok), (200, 200), "{:?}", r.errors);
    assert_matches(&result, "result.schema.json");
    let seen = by_seq(&log.lock().unwrap());
    assert_eq!(seen.len(), 200);
    for (seq, s) in &seen {
        let line = &lines[(*seq % 40) as usize];
        // The body is the line's body, serialised once at start-up, byte for byte.
        assert_eq!(s.body, line["body"].to_string().into_bytes(), "seq {seq}");
        let path = line["route"].as_str().unwrap_or("/v1/chat/completions");
        assert_eq!(s.path, path, "seq {seq}");
    }
    // Per class: 4 routed lines, 18 small, 18 large in each of the 5 passes over the 40.
    let classes: BTreeMap<&str, u64> = r
        .classes
        .iter()
        .map(|c| (c.name.as_str(), c.requests))
        .collect();
    assert_eq!(
        classes,
        BTreeMap::from([("large", 90), ("routed", 20), ("small", 90)])
    );
    let large = r.classes.iter().find(|c| c.name == "large").unwrap();
    assert!(
        large.mean_body_bytes > 20_000.0,
        "{}",
        large.mean_body_bytes
    );
}

#[test]
fn a_corpus_is_drawn_by_weight_and_seed() {
    let (addr, log) = start_recording();
    let file = Temp::new(
        "weighted.jsonl",
        "{\"weight\": 1, \"body\": {\"n\": 1}}\n{\"weight\": 4, \"body\": {\"n\": 2}}\n",
    );
    let send = |seed| {
        log.lock().unwrap().clear();
        let (result, _) = run(
            LoadArgs {
                rate: Some("1k".into()),
                duration: Some("1s".into()),
                requests_file: Some(file.0.clone()),
                request: loadgen::options::RequestFlags {
                    seed: Some(seed),
                    ..Default::default()
                },
                ..args(format!("http://{addr}/v1/chat/completions"))
            },
            vec![],
        )
        .unwrap();
        assert_eq!(result.runs[0].ok, 1_000);
        by_seq(&log.lock().unwrap())
            .into_values()
            .map(|s| s.body)
            .collect::<Vec<_>>()
    };
    let (a, b, c) = (send(1), send(1), send(2));
    let heavy = a.iter().filter(|b| b.as_slice() == b"{\"n\":2}").count();
    assert!(
        (730..=870).contains(&heavy),
        "{heavy} of 1000 drew the line of weight 4"
    );
    assert_eq!(a, b, "the same seed sends the same sequence");
    assert_ne!(a, c);
}

#[test]
fn a_trace_is_replayed_at_its_instants() {
    let (addr, log) = start_recording();
    let file = Temp::new(
        "trace.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n\
         2023-11-16 18:15:46.0000000,100,5\n\
         2023-11-16 18:15:46.2500000,2000,7\n\
         2023-11-16 18:15:46.3000000,300,9\n\
         2023-11-16 18:15:47.0000000,50,1\n",
    );
    for speedup in [1.0, 2.0] {
        log.lock().unwrap().clear();
        // Four requests say little of the generator's timing: the run's validity (its lag
        // median, on a loaded machine or a debug build) is not what this test is about.
        // The run's zero comes after this instant, so no row may reach the upstream sooner
        // after it than the trace says, however slow the host.
        let before = Instant::now();
        let (result, _) = run(
            LoadArgs {
                trace: Some(file.0.clone()),
                speedup: Some(speedup),
                ..args(format!("http://{addr}/v1/chat/completions"))
            },
            vec![],
        )
        .unwrap();
        let r = &result.runs[0];
        assert_eq!(r.ok, 4, "{:?}", r.errors);
        assert_matches(&result, "result.schema.json");
        let seen = by_seq(&log.lock().unwrap());
        let first = seen[&0].at;
        let precise = precision_run();
        for (seq, want_ms) in [(1, 250.0), (2, 300.0), (3, 1_000.0)] {
            // Never early: on any host.
            let since_ms = seen[&seq].at.duration_since(before).as_secs_f64() * 1e3;
            assert!(
                since_ms >= want_ms / speedup,
                "row {seq} {since_ms:.1} ms after the run was started, trace says {} ms",
                want_ms / speedup
            );
            // Close to the trace's instant from the first row's: a stalled thread delays one
            // row and not the other, so this is the precision run's.
            let got_ms = seen[&seq].at.duration_since(first).as_secs_f64() * 1e3;
            // Loose for a loaded machine; the schedule's own precision is in its lag.
            assert!(
                !precise || (got_ms - want_ms / speedup).abs() < 40.0,
                "row {seq} at {got_ms:.1} ms, trace says {} ms",
                want_ms / speedup
            );
        }
        // Each row's body asks for its output tokens with a prompt of its input tokens.
        let body: serde_json::Value = serde_json::from_slice(&seen[&1].body).unwrap();
        assert_eq!(body["max_tokens"], 7);
        let prompt = body["messages"][0]["content"].as_str().unwrap();
        assert_eq!(prompt.len(), 8_000);
        // Four requests' p99 is their worst: one scheduler stall of the machine's other tests
        // sets it (over 5 ms in one CI run's untimed pass), so it gets the instants' bound.
        // The schedule's precision is the timed tests' business, and the precision run's.
        let lag = r.metrics["schedule_lag"].p99;
        assert!(!precise || lag < 40_000, "schedule lag p99 {lag} µs");
    }
}

#[test]
fn stages_ramp_the_rate_and_report_each_stage() {
    let (addr, log) = start_recording();
    let out = Temp::new("stages.json", "");
    // The run's zero comes after this instant: no slot reaches the upstream sooner after it
    // than the stages place it, however slow the host.
    let before = Instant::now();
    let (result, _) = run(
        LoadArgs {
            stages: Some("0s:200,1s:200,0s:600,500ms:600,500ms:0".into()),
            ..args(format!("http://{addr}/v1/chat/completions"))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    // The stages' counts and instants are checked below; the run's validity (its generator lag,
    // on a machine loaded by the other tests) is not what this test is about.
    assert_eq!(r.failed, 0, "{:?}", r.errors);
    assert_matches(&result, "result.schema.json");
    let counts: Vec<u64> = r.stages.iter().map(|s| s.requests).collect();
    // 200 in the first second, 300 in the next half, 150 on the way down (a slot or two may
    // fall on a boundary's either side).
    assert_eq!(counts.len(), 5);
    assert_eq!(counts[0] + counts[2], 0);
    assert!(
        counts[1].abs_diff(200) <= 1 && counts[3].abs_diff(300) <= 1,
        "{counts:?}"
    );
    assert!(counts[4].abs_diff(150) <= 1, "{counts:?}");
    assert_eq!(r.requests, counts.iter().sum::<u64>());
    let seen = by_seq(&log.lock().unwrap());
    let first = seen[&0].at;
    let at = |seq: u64| seen[&seq].at.duration_since(first);
    // The 200th request is the first of the 600-a-second stage, at 1 s: never sooner, on any
    // host.
    let since = seen[&200].at.duration_since(before);
    assert!(since >= Duration::from_secs(1), "{since:?}");
    // How near to its instant each arrives, against the first's, is the precision run's: a
    // stalled thread delays one and not another.
    if precision_run() {
        // Loose: the recording upstream runs a thread per connection on a loaded machine.
        assert!(at(200).abs_diff(Duration::from_secs(1)) < Duration::from_millis(50));
        assert!(at(199) < Duration::from_millis(1_050));
        // The last slots thin out: the gap before the last is wider than the flat stage's.
        let n = seen.len() as u64;
        assert!(at(n - 1) - at(n - 2) > Duration::from_micros(1_667));
    }
    // On the HTML timeline, each stage with a length starts at a dashed line with its rates.
    std::fs::write(&out.0, serde_json::to_vec(&result).unwrap()).unwrap();
    let html = loadgen::report::render::render(&out.0, loadgen::options::Format::Html).unwrap();
    assert_eq!(
        html.matches("stroke-dasharray=\"4 3\"").count(),
        3,
        "{html}"
    );
    assert!(html.contains("600→600/s") && html.contains("600→0/s"));
}
