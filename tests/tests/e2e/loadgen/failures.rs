//! Every failure kind provoked for real, counted by kind, never lost from the totals.

use std::time::{Duration, Instant};

use gatebench_tests::faulty::{start_faulty, Fault};
use loadgen::commands::run::run;
use loadgen::LoadArgs;

use gatebench_tests::load_args::args;

fn run_against(fault: Fault, scenario: &str) -> loadgen::results::run::TargetRun {
    let addr = start_faulty(fault);
    let started = Instant::now();
    let (mut result, code) = run(
        LoadArgs {
            rate: Some("50".into()),
            duration: Some("1s".into()),
            connections: Some(8),
            request: loadgen::options::RequestFlags {
                timeout: Some("300ms".into()),
                scenario: Some(scenario.into()),
                ..Default::default()
            },
            ..args(format!("http://{addr}/v1/chat/completions"))
        },
        vec![],
    )
    .unwrap();
    // The run ends on time: duration plus at most a request timeout and set-up.
    let bound = gatebench_tests::upper_bound(Duration::from_secs(4), Duration::from_secs(30));
    assert!(started.elapsed() < bound, "{:?}", started.elapsed());
    assert_eq!(code, 1, "a run where every request fails is not ok");
    let run = result.runs.remove(0);
    assert_eq!(run.requests, 50, "every scheduled request is accounted for");
    assert_eq!(run.ok, 0);
    assert_eq!(run.failed, 50);
    run
}

#[test]
fn a_server_that_resets_counts_as_reset() {
    let run = run_against(Fault::Reset, "chat");
    assert_eq!(run.errors.get("reset"), Some(&50), "{:?}", run.errors);
}

#[test]
fn a_server_that_stalls_counts_as_timeout() {
    let run = run_against(Fault::Stall, "chat");
    // Eight connections stall; the rest wait for one until their timeout.
    assert_eq!(run.errors.get("timeout"), Some(&50), "{:?}", run.errors);
}

#[test]
fn a_stream_without_its_end_marker_counts_as_truncated() {
    let run = run_against(Fault::TruncatedStream, "chat-stream");
    assert_eq!(run.errors.get("truncated"), Some(&50), "{:?}", run.errors);
}

#[test]
fn a_body_that_is_not_json_counts_as_invalid() {
    let run = run_against(Fault::Garbage, "chat");
    assert_eq!(run.errors.get("invalid"), Some(&50), "{:?}", run.errors);
}

#[test]
fn an_error_status_counts_by_code() {
    let run = run_against(Fault::Unavailable, "chat");
    assert_eq!(run.errors.get("status_503"), Some(&50), "{:?}", run.errors);
}

#[test]
fn a_target_that_goes_away_counts_as_connect_refused() {
    // A mock that answers, then stops: connections already open fail, new ones are refused.
    // It stops once it has answered 50 requests, half a second into the 3 s run on schedule,
    // which leaves seconds of requests to be refused however late a busy host makes that.
    let mock = gatebench_tests::start_mock(mock_upstream::Config::default());
    let url = format!("http://{}/v1/chat/completions", mock.local_addr());
    let stopper = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while mock.metrics().responses(200) < 50 {
            assert!(
                Instant::now() < deadline,
                "the mock answered {} requests in 30 s",
                mock.metrics().responses(200)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        mock.shutdown();
    });
    let (result, _) = run(
        LoadArgs {
            rate: Some("100".into()),
            duration: Some("3s".into()),
            connections: Some(2),
            request: loadgen::options::RequestFlags {
                timeout: Some("300ms".into()),
                ..Default::default()
            },
            ..args(url)
        },
        vec![],
    )
    .unwrap();
    stopper.join().unwrap();
    let r = &result.runs[0];
    assert_eq!(r.requests, 300);
    // The 50 it answered reached the client, but for those in flight when it stopped.
    assert!(r.ok >= 40, "{}", r.ok);
    assert!(
        r.errors.get("connect_refused").copied().unwrap_or(0) >= 50,
        "{:?}",
        r.errors
    );
    assert_eq!(r.ok + r.failed, 300);
}

#[test]
fn a_stream_that_never_ends_counts_as_timeout_and_the_run_ends_on_time() {
    let run = run_against(Fault::EndlessStream, "chat-stream");
    assert_eq!(run.errors.get("timeout"), Some(&50), "{:?}", run.errors);
}

#[test]
fn an_event_that_never_ends_is_bounded_and_the_run_ends_on_time() {
    // 64 KiB writes as fast as loadgen reads: its event buffer is capped, so the run's memory
    // stays bounded while every request runs into its timeout.
    let run = run_against(Fault::EndlessEvent, "chat-stream");
    let (timeout, invalid) = (run.errors.get("timeout"), run.errors.get("invalid"));
    assert_eq!(
        timeout.unwrap_or(&0) + invalid.unwrap_or(&0),
        50,
        "{:?}",
        run.errors
    );
}
