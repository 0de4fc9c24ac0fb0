//! `loadgen behaviour` against reference gateways of known behaviour (tests/src/behaving.rs)
//! in front of gatebench mocks steered through their control listeners: the retry delay, the
//! amplification, the switch-over and return times and the hit rate it reports are those the
//! reference was built with, within tolerances for a loaded 2-core machine; every mock is back
//! as it started after the run, after a Ctrl-C too.

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use gatebench_tests::behaving::{start_behaving, Behaviour};
use gatebench_tests::{assert_valid_but_for_timing, precision_run, start_mock};
use loadgen::commands::behaviour::run_behaviour;
use loadgen::options::BehaviourArgs;
use loadgen::results::behaviour::BehaviourResult;
use mock_upstream::{Config, MockServer};

const LOADGEN: &str = env!("CARGO_BIN_EXE_e2e-loadgen");

/// A mock that records and listens for control on loopback.
fn steerable(name: &str) -> MockServer {
    start_mock(Config {
        name: Some(name.into()),
        record: 100_000,
        control: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        ..Config::default()
    })
}

/// The reference gateway in front of `a` then `b`: a failed request retried once on `b` after
/// `retry_delay`; after `switch_after` failures `a` is out for `cooldown`.
fn failing_over(
    a: &MockServer,
    b: &MockServer,
    retry_delay: Duration,
    switch_after: usize,
    cooldown: Duration,
) -> (
    SocketAddr,
    std::sync::Arc<std::sync::Mutex<gatebench_tests::behaving::Tally>>,
) {
    start_behaving(
        vec![a.local_addr(), b.local_addr()],
        Behaviour::Failover {
            retry_delay,
            switch_after,
            cooldown,
        },
    )
}

fn control_url(mock: &MockServer) -> String {
    format!(
        "http://{}",
        mock.control_addr().expect("a control listener")
    )
}

fn args(scenario: &str, gateway: SocketAddr, mocks: &[(&str, &MockServer)]) -> BehaviourArgs {
    BehaviourArgs {
        behaviour: scenario.into(),
        gateways: vec![format!("ref=http://{gateway}/v1/chat/completions")],
        upstreams: mocks
            .iter()
            .map(|(n, m)| format!("{n}={}", control_url(m)))
            .collect(),
        rate: Some(100.0),
        trials: Some(2),
        before: Some("1s".into()),
        window: Some("1s".into()),
        after: Some("1500ms".into()),
        settle: Some("200ms".into()),
        quiet: true,
        ..BehaviourArgs::default()
    }
}

fn figure(result: &BehaviourResult, name: &str) -> Option<f64> {
    result.gateways[0]
        .figures
        .get(name)
        .and_then(|f| f.estimate)
}

fn per_trial(result: &BehaviourResult, name: &str) -> Vec<Option<f64>> {
    result.gateways[0].figures[name].per_trial.clone()
}

/// GET the control state of `mock`: whether it is steered.
fn steered(mock: &MockServer) -> bool {
    let text = std::process::Command::new("curl")
        .args(["-s", &format!("{}/v1/gatebench/control", control_url(mock))])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let state: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    state["steered"].as_bool().unwrap_or(true)
}

#[test]
fn failover_reports_the_references_retry_delay_switch_over_and_return() {
    let (a, b) = (steerable("a"), steerable("b"));
    let (gateway, tally) = failing_over(
        &a,
        &b,
        Duration::from_millis(50),
        3,
        Duration::from_millis(1500),
    );
    let (result, code) =
        run_behaviour(args("failover", gateway, &[("a", &a), ("b", &b)]), vec![]).unwrap();
    assert_valid_but_for_timing(code, &result.invalid_reasons);
    // Each figure is never below what the reference does (a wait is never early); how near
    // it comes is this host's precision.
    let precise = precision_run();
    let g = &result.gateways[0];
    assert_eq!(g.source, "marks");
    // One retry after 50 ms, as the reference waits.
    let delay = figure(&result, "retry_delay_ms").unwrap();
    assert!(
        delay >= 45.0 && (!precise || delay < 100.0),
        "retry delay {delay} ms"
    );
    // Three failures 10 ms apart at 100 req/s take A out: the switch is the third.
    let switch = figure(&result, "switch_over_ms");
    assert!(
        matches!(switch, Some(s) if s >= 5.0 && (!precise || s < 200.0)),
        "switch over {switch:?}"
    );
    // Back 1.5 s after the switch, which is about 0.5 s after the window closed.
    let back = figure(&result, "return_ms");
    assert!(
        matches!(back, Some(r) if r >= 250.0 && (!precise || r < 1000.0)),
        "return {back:?}"
    );
    // 350 requests a trial and 3 retries: amplification just above 1.
    let amp = figure(&result, "amplification").unwrap();
    assert!(amp > 1.0 && (!precise || amp < 1.05), "amplification {amp}");
    // Every failed request was retried to B and answered: no client errors.
    for phase in ["before", "window", "after"] {
        let rate = figure(&result, &format!("error_rate_{phase}")).unwrap();
        assert!(rate < 0.01, "error rate {phase} {rate}");
    }
    let penalty = figure(&result, "failover_penalty_ms").unwrap();
    assert!(
        penalty >= 40.0 && (!precise || penalty < 150.0),
        "failover penalty {penalty} ms"
    );
    assert_eq!(tally.lock().unwrap().switches, 2, "one switch a trial");
    gatebench_tests::schema::assert_matches(&result, "behaviour.schema.json");
    assert!(!steered(&a) && !steered(&b), "the mocks were reset");
}

#[test]
fn a_gateway_that_never_switches_is_said_so() {
    let (a, b) = (steerable("a"), steerable("b"));
    // Never takes A out: every request in the window tries A, then B.
    let (gateway, _) = failing_over(&a, &b, Duration::from_millis(5), usize::MAX, Duration::ZERO);
    let mut retries = args("retries", gateway, &[("a", &a), ("b", &b)]);
    retries.fault = Some("503".into());
    let (result, _) = run_behaviour(retries, vec![]).unwrap();
    // 100 of 350 requests a trial went to A first: 1 + 100/350, where each was sent when it
    // was due (which requests fall in the window is the host's timing).
    let amp = figure(&result, "amplification").unwrap();
    let failed = figure(&result, "amplification_503").unwrap();
    assert!(
        amp > 1.0 && failed > 0.0,
        "amplification {amp}, 503s {failed}"
    );
    if precision_run() {
        assert!((1.24..1.33).contains(&amp), "amplification {amp}");
        assert!((0.25..0.31).contains(&failed), "503s per request {failed}");
    }
    let mut failover = args("failover", gateway, &[("a", &a), ("b", &b)]);
    failover.trials = Some(1);
    let (result, _) = run_behaviour(failover, vec![]).unwrap();
    let s = &result.gateways[0].figures["switch_over_ms"];
    assert_eq!(s.estimate, None);
    assert!(s.said.starts_with("never within the window"), "{}", s.said);
}

#[test]
fn refused_connections_fail_over_and_say_what_cannot_be_seen() {
    let (a, b) = (steerable("a"), steerable("b"));
    let (gateway, tally) = failing_over(
        &a,
        &b,
        Duration::from_millis(5),
        3,
        Duration::from_millis(1500),
    );
    let mut refuse = args("failover", gateway, &[("a", &a), ("b", &b)]);
    refuse.fault = Some("refuse".into());
    refuse.trials = Some(1);
    let (result, code) = run_behaviour(refuse, vec![]).unwrap();
    assert_valid_but_for_timing(code, &result.invalid_reasons);
    // The reference retried every refused request on B: no client errors.
    let errors = figure(&result, "error_rate_window").unwrap();
    assert!(errors < 0.01, "errors in the window {errors}");
    assert!(tally.lock().unwrap().switches >= 1, "A was taken out");
    // What no record can show is said, not guessed.
    for name in ["switch_over_ms", "amplification"] {
        let f = &result.gateways[0].figures[name];
        assert_eq!(f.estimate, None, "{name}");
        assert!(f.said.starts_with("not observable"), "{name}: {}", f.said);
    }
    // A's listener is back: it answers again after the window.
    assert!(figure(&result, "return_ms").is_some());
    assert!(!steered(&a), "the mock was reset");
}

#[test]
fn a_cache_reports_its_hit_rate_exactly() {
    let a = steerable("a");
    let (gateway, tally) = start_behaving(vec![a.local_addr()], Behaviour::Cache);
    let mut cache = args("cache", gateway, &[("a", &a)]);
    cache.distinct = Some(5);
    let (result, code) = run_behaviour(cache, vec![]).unwrap();
    assert_valid_but_for_timing(code, &result.invalid_reasons);
    // 350 requests of 5 prompts a trial, new prompts in each trial: 345 hits in each. A
    // generator that fell behind and caught up in a burst can send a prompt again before its
    // first answer was cached, so a late run (said so) may hit fewer, never more.
    let hits = per_trial(&result, "hit_rate");
    let counted = tally.lock().unwrap().hits;
    if result.invalid_reasons.is_empty() {
        assert_eq!(hits, vec![Some(345.0 / 350.0); 2], "{hits:?}");
        assert_eq!(figure(&result, "hit_rate"), Some(345.0 / 350.0));
        assert_eq!(counted, 2 * 345);
    } else {
        assert!(counted <= 2 * 345, "{counted}");
    }
    // Hits and misses have latencies of their own.
    assert!(figure(&result, "hit_p50_ms").is_some() && figure(&result, "miss_p50_ms").is_some());
    gatebench_tests::schema::assert_matches(&result, "behaviour.schema.json");
}

#[test]
fn a_mock_steered_by_a_stopped_run_is_reset() {
    let (a, b) = (steerable("a"), steerable("b"));
    let (gateway, _) = failing_over(&a, &b, Duration::from_millis(5), 3, Duration::from_secs(1));
    let mut child = Command::new(LOADGEN)
        .args([
            "behaviour",
            "failover",
            "--quiet",
            "--trials",
            "3",
            "--window",
            "5s",
        ])
        .arg("--gateway")
        .arg(format!("ref=http://{gateway}/v1/chat/completions"))
        .arg("--upstream")
        .arg(format!("a={}", control_url(&a)))
        .arg("--upstream")
        .arg(format!("b={}", control_url(&b)))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Into the window (2 s of load before it, after loadgen's set-up), then stopped as
    // Ctrl-C does.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !steered(&a) {
        assert!(
            std::time::Instant::now() < deadline,
            "the window never began"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted run is not valid");
    assert!(!steered(&a) && !steered(&b), "the mocks were reset");
}

#[test]
fn bad_steering_is_refused_before_any_load() {
    let a = steerable("a");
    let plain = start_mock(Config::default());
    let (gateway, _) = start_behaving(vec![a.local_addr()], Behaviour::Cache);
    // A mock without a control listener: its main port answers control with 409.
    let mut off = args("cache", gateway, &[("a", &a)]);
    off.upstreams = vec![format!("a=http://{}", plain.local_addr())];
    let e = run_behaviour(off, vec![]).unwrap_err().to_string();
    assert!(e.contains("--control"), "{e}");
    // A mock named otherwise than its --upstream.
    let mut swapped = args("cache", gateway, &[("a", &a)]);
    swapped.upstreams = vec![format!("b={}", control_url(&a))];
    let e = run_behaviour(swapped, vec![]).unwrap_err().to_string();
    assert!(e.contains("named \"a\""), "{e}");
    let mut none = args("failover", gateway, &[("a", &a)]);
    none.upstreams.truncate(1);
    let e = run_behaviour(none, vec![]).unwrap_err().to_string();
    assert!(e.contains("needs 2"), "{e}");
}
