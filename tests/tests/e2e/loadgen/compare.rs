//! `loadgen compare` against a forwarder that adds a known 2 ms, with a 0 ms forwarder as the
//! direct path, and the reports of every result kind in every format.

use std::time::Duration;

use gatebench_tests::gateway::{start_delay_gateway, start_delay_gateway_recorded};
use gatebench_tests::reports::check_reports;
use gatebench_tests::{precision_run, start_mock};
use loadgen::commands::compare::run_compare;
use loadgen::options::CompareArgs;
use loadgen::options::Format;
use loadgen::report::output::write_json;
use loadgen::report::render::render;
use loadgen::LoadArgs;

fn url(addr: std::net::SocketAddr) -> String {
    format!("http://{addr}/v1/chat/completions")
}

#[test]
fn alternating_trials_find_a_known_delay_and_every_report_renders() {
    let mock = start_mock(mock_upstream::Config::default());
    let direct = start_delay_gateway(mock.local_addr(), Duration::ZERO);
    let (slow, slow_held) =
        start_delay_gateway_recorded(mock.local_addr(), Duration::from_millis(2));
    let (result, code, started) = {
        let started = std::time::Instant::now();
        let (result, code) = run_compare(
            CompareArgs {
                pause: loadgen::options::SettleFlag {
                    settle: Some("300ms".into()),
                },
                load: LoadArgs {
                    rate: Some("100".into()),
                    duration: Some("1s".into()),
                    connections: Some(8),
                    quiet: true,
                    ..LoadArgs::default()
                },
                targets: loadgen::options::GatewayFlags {
                    direct: Some(url(direct)),
                    gateways: vec![format!("slow={}", url(slow))],
                    gateway_info: vec!["slow=adds 2 ms".into()],
                    gateway_recording: vec!["slow=full".into()],
                    // This process stands for a gateway's: its CPU and memory are in every format.
                    sample: vec![format!("self={}", std::process::id())],
                },
                judge: loadgen::options::JudgeFlags {
                    trials: Some(3),
                    min_effect: None,
                    // The default twin: the direct URL again, a target of its own in every trial.
                    twin: None,
                },
            },
            vec!["loadgen".into(), "compare".into()],
        )
        .unwrap();
        (result, code, started)
    };
    // On a busy host a trial may be invalid for the generator's own lag; nothing else may go
    // wrong.
    gatebench_tests::assert_valid_but_for_timing(code, &result.footer.invalid_reasons);
    // Each trial after the first waited --settle first: nine 1 s trials and eight pauses.
    assert_eq!(result.header.settle_us, 300_000);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(9_000 + 8 * 300),
        "{elapsed:?}"
    );
    // Alternating: direct, twin, slow, three times.
    assert!(result.header.twin);
    let order: Vec<&str> = result.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        order,
        ["direct", "twin", "slow", "direct", "twin", "slow", "direct", "twin", "slow"]
    );
    for s in &result.summary {
        assert_eq!((s.trials, s.requests, s.ok), (3, 300, 300), "{}", s.name);
    }
    // The twin's rows are the control; they set each percentile's resolution.
    for twin in result.deltas.iter().filter(|d| d.gateway == "twin") {
        assert!(twin.control, "{twin:?}");
        assert!(twin.verdict.starts_with("control"), "{twin:?}");
        assert!(twin.p_adjusted.is_none(), "{twin:?}");
    }
    let p50 = result
        .deltas
        .iter()
        .find(|d| d.gateway == "slow" && d.percentile == "p50")
        .unwrap();
    assert!(p50.resolution_us > 0.0, "{p50:?}");
    // Whether 2 ms is resolved on real trials is this machine's precision (the verdict's rule
    // is tested exactly on given trials in the judge's own tests).
    let verdicts = [
        "adds latency",
        "unresolved",
        "within the resolution",
        "not distinguishable",
    ];
    assert!(
        verdicts.iter().any(|v| p50.verdict.starts_with(v)),
        "{p50:?}"
    );
    if gatebench_tests::precision_run() {
        assert_eq!(p50.verdict, "adds latency", "{p50:?}");
        let added = p50.added_us.unwrap();
        // What the forwarder really held (2 ms plus its sleep's overshoot on this machine),
        // give or take the machine's trial-to-trial drift.
        let mut held: Vec<f64> = slow_held
            .lock()
            .unwrap()
            .iter()
            .map(|d| d.as_secs_f64() * 1e6)
            .collect();
        held.sort_by(f64::total_cmp);
        let known = held[held.len() / 2];
        assert!(
            (known - 300.0..known + 300.0).contains(&added.estimate),
            "{added:?} against {known}"
        );
        assert!(!added.contains_zero(), "{added:?}");
    }

    gatebench_tests::schema::assert_matches(&result, "compare.schema.json");
    let dir = std::env::temp_dir().join(format!("gatebench-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("compare.json");
    write_json(&result, &path).unwrap();
    check_reports(&path, "trial,target,requests");
    gatebench_tests::reports::check_disclosure(&path);
    assert!(!result.footer.resources.is_empty());
    let md = render(&path, Format::Md).unwrap();
    assert!(md.contains("## Sampled processes"), "{md}");
    assert!(md.contains("self (pid"), "{md}");
    let html = render(&path, Format::Html).unwrap();
    assert!(html.contains("self (pid"));
    check_combined(&dir, &path);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `loadgen report --combine`: this result and a copy whose gateway is renamed, as one table
/// with the direct row first and every gateway's added latency against its own file's direct.
fn check_combined(dir: &std::path::Path, path: &std::path::Path) {
    use loadgen::report::leaderboard;
    let text = std::fs::read_to_string(path).unwrap();
    let other = dir.join("other.json");
    std::fs::write(&other, text.replace("\"slow\"", "\"other\"")).unwrap();
    let views = leaderboard::read(&[path.to_path_buf(), other.clone()]).unwrap();
    let md = leaderboard::markdown(&views);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(
        rows[0].starts_with(
            "| gateway | requests | throughput (req/s) | success | P50 | P99 | P99.9 | added P50"
        ),
        "{md}"
    );
    assert!(rows[1].starts_with("| direct (no gateway) | 300 |"), "{md}");
    for (row, name) in rows[2..].iter().zip(["slow", "other"]) {
        assert!(row.starts_with(&format!("| {name} | 300 |")), "{md}");
        // The p50 verdict in short; that it is "adds" is this machine's precision.
        let short = [
            "(adds)",
            "(faster)",
            "(within resolution)",
            "(not distinguishable)",
        ];
        assert!(short.iter().any(|s| row.contains(s)), "{row}");
        assert!(
            row.contains("| full | adds 2 ms |") && (!precision_run() || row.contains("(adds)")),
            "{row}"
        );
    }
    assert_eq!(rows.len(), 4, "{md}");
    assert!(md.contains("other.json: 3 trial(s)"), "{md}");
    let html = leaderboard::html(&views);
    assert!(html.starts_with("<!DOCTYPE html>") && html.matches("<tr>").count() == 4);
    // Only `loadgen compare` results combine.
    let run = dir.join("run.json");
    std::fs::write(&run, r#"{"schema": "gatebench.loadgen.result/1"}"#).unwrap();
    let err = leaderboard::read(&[path.to_path_buf(), run])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--combine takes `loadgen compare` results"),
        "{err}"
    );
}
