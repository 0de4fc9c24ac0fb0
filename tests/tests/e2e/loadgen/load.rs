//! loadgen against the mock: the schedule is kept, counts add up, stream metrics match the
//! mock's configured latency.

use gatebench_shared::LatencyModel;
use gatebench_tests::load_args::{args, url};
use gatebench_tests::{assert_valid_but_for_timing, precision_run, start_mock};
use loadgen::commands::run::run;
use loadgen::LoadArgs;
use mock_upstream::Config;

/// A mock whose every whole answer takes `latency`.
fn mock_answering_in(latency: &str) -> mock_upstream::MockServer {
    start_mock(Config {
        latency: LatencyModel {
            response: Some(latency.parse().unwrap()),
            ..LatencyModel::default()
        },
        ..Config::default()
    })
}

#[test]
fn open_loop_sends_the_schedule_and_accounts_for_every_request() {
    let mock = start_mock(Config::default());
    let (result, code) = run(
        LoadArgs {
            rate: Some("1k".into()),
            duration: Some("2s".into()),
            warmup: Some("500ms".into()),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    // Constant arrivals: exactly rate × duration slots in the window, 500 in the warm-up.
    assert_eq!(r.requests, 2000, "{r:?}");
    assert_eq!(r.warmup_requests, 500);
    assert_eq!(r.ok, 2000);
    assert!(r.errors.is_empty());
    let precise = precision_run();
    // The rate achieved is the generator's pace on this host: the counts above are the code's,
    // the pace the precision run's (a stalled worker sends its slots late, not fewer of them).
    assert!(
        !precise || (r.achieved_rate - 1000.0).abs() < 15.0,
        "{}",
        r.achieved_rate
    );
    let mock_chat = mock.metrics().requests(mock_upstream::RouteKind::Chat);
    assert_eq!(
        mock_chat, 2500,
        "the mock saw every request, warm-up included"
    );
    assert!(r.connections_opened <= 32);
    // Every request found an open connection, but for those that opened one.
    assert!(r.connections_reused >= 2500 - r.connections_opened);
    let p50 = r.metrics["response_time"].p50;
    assert!(!precise || p50 < 50_000, "response time p50 {p50} us");
    assert_eq!(code == 0, result.valid);
}

#[test]
fn throughput_counts_what_finished_not_what_was_planned() {
    // Two connections to a mock that answers in 20 ms hold at most ~100 answers a second; the
    // plan asks for 400 a second for 1 s.
    let slow = mock_answering_in("20ms");
    let (result, _) = run(
        LoadArgs {
            rate: Some("400".into()),
            duration: Some("1s".into()),
            connections: Some(2),
            request: loadgen::options::RequestFlags {
                timeout: Some("30s".into()),
                ..Default::default()
            },
            ..args(url(&slow))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 400, "{:?}", r.errors);
    // Past 100 a second the two connections cannot go (each answer takes at least 20 ms), on
    // any host; how close to it they come is the host's pace.
    assert!(
        r.throughput < 110.0 && (!precision_run() || r.throughput > 60.0),
        "throughput {} over {} s",
        r.throughput,
        r.completion_window_s
    );
    // 400 answers, two at a time at most and each 20 ms at least, end over about 4 s at least.
    assert!(r.completion_window_s > 3.0, "{}", r.completion_window_s);
    // A target that keeps up: the throughput is the rate.
    let fast = start_mock(Config::default());
    let (result, _) = run(
        LoadArgs {
            rate: Some("400".into()),
            duration: Some("1s".into()),
            ..args(url(&fast))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 400, "{:?}", r.errors);
    // Keeping up with the plan is this host's pace, not the code's.
    if precision_run() {
        assert!((r.throughput - 400.0).abs() < 10.0, "{}", r.throughput);
    }
}

#[test]
fn stream_metrics_match_the_mock_latency_model() {
    let mock = start_mock(Config {
        latency: LatencyModel {
            ttft: "50ms".parse().unwrap(),
            itl: "10ms".parse().unwrap(),
            tokens: "10".parse().unwrap(),
            ..LatencyModel::default()
        },
        ..Config::default()
    });
    let (result, _) = run(
        LoadArgs {
            rate: Some("40".into()),
            duration: Some("2s".into()),
            request: loadgen::options::RequestFlags {
                scenario: Some("chat-stream".into()),
                ..Default::default()
            },
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 80, "{:?}", r.errors);
    let m = &r.metrics;
    let precise = precision_run();
    let within = |name: &str, lo: u64, hi: u64| {
        let p50 = m[name].p50;
        // The mock's deadlines are never early, so a stalled thread makes a time later, never
        // shorter, and a late token shortens the gap after it only by what it added to the gap
        // before, so the gaps' median holds too: the lower bound holds on any host, the upper
        // one is the precision run's.
        assert!(
            p50 >= lo && (!precise || p50 <= hi),
            "{name} p50 {p50} us not in {lo}..={hi}"
        );
    };
    // The mock's timer is never early and late by a tick or two; leave room for a busy machine.
    within("ttft_service", 50_000, 65_000);
    within("ttft", 50_000, 70_000);
    within("itl", 8_000, 13_000);
    within("tpot", 9_000, 13_000);
    within("service_time", 140_000, 160_000);
    assert_eq!(m["output_tokens"].max, 10);
    assert_eq!(m["output_chunks"].min, 10);
    assert_eq!(m["itl"].count, 80 * 9);
}

#[test]
fn closed_loop_keeps_n_requests_in_flight() {
    let mock = mock_answering_in("20ms");
    let (result, _) = run(
        LoadArgs {
            concurrency: Some(4),
            duration: Some("1s".into()),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    // Four loops of ~20 ms requests for a second: about 200, never more (each answer takes at
    // least 20 ms on any host); how near 200 they get is the host's pace.
    assert!(r.ok <= 204 && (!precision_run() || r.ok >= 120), "{}", r.ok);
    assert!(r.connections_opened <= 4);
    assert!(r.metrics["response_time"].p50 >= 20_000);
}

#[test]
fn poisson_arrivals_are_seeded_and_reach_the_rate() {
    let mock = start_mock(Config::default());
    let once = || {
        let (result, _) = run(
            LoadArgs {
                rate: Some("500".into()),
                arrival: Some("poisson".into()),
                duration: Some("2s".into()),
                request: loadgen::options::RequestFlags {
                    seed: Some(3),
                    ..Default::default()
                },
                ..args(url(&mock))
            },
            vec![],
        )
        .unwrap();
        result.runs[0].requests
    };
    let (a, b) = (once(), once());
    assert_eq!(a, b, "the same seed gives the same schedule");
    assert!((850..=1150).contains(&a), "{a}");
}

#[test]
fn the_upstream_count_check_sees_exactly_what_was_sent() {
    let mock = start_mock(Config::default());
    let (result, _) = run(
        LoadArgs {
            rate: Some("300".into()),
            duration: Some("1s".into()),
            warmup: Some("200ms".into()),
            upstream_metrics: Some(format!("http://{}", mock.local_addr())),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    let u = r.upstream.expect("the mock's /metrics was read");
    assert_eq!(u.sent, r.requests + r.warmup_requests);
    assert_eq!((u.seen, u.matches), (u.sent, true), "{u:?}");
    assert!(loadgen::report::terminal::summary(&result).contains("exactly the requests sent"));
}

#[test]
fn an_upstream_that_saw_other_requests_is_reported_as_a_mismatch() {
    let mock = start_mock(Config::default());
    // The count is read from a mock that gets none of the requests, as an upstream behind a
    // caching gateway would.
    let elsewhere = start_mock(Config::default());
    let (result, _) = run(
        LoadArgs {
            rate: Some("200".into()),
            duration: Some("500ms".into()),
            upstream_metrics: Some(format!("http://{}/metrics", elsewhere.local_addr())),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let u = result.runs[0].upstream.unwrap();
    assert_eq!((u.seen, u.sent, u.matches), (0, 100, false));
    assert!(loadgen::report::terminal::summary(&result).contains("NOT the requests sent"));
}

#[test]
fn a_closed_loop_run_can_send_a_fixed_count_after_its_warm_up() {
    let mock = start_mock(Config::default());
    let (result, code) = run(
        LoadArgs {
            concurrency: Some(3),
            requests: Some(100),
            warmup: Some("50ms".into()),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let reasons: Vec<String> = result
        .runs
        .iter()
        .flat_map(|r| r.validity.reasons.clone())
        .collect();
    assert_valid_but_for_timing(code, &reasons);
    let r = &result.runs[0];
    // Exactly the measured count; the warm-up's requests come on top and are not counted.
    assert_eq!((r.requests, r.ok), (100, 100));
    assert_eq!(result.plan.requests, Some(100));
    assert!(result.plan.duration_us.is_none());
    gatebench_tests::schema::assert_matches(&result, "result.schema.json");
    // A count needs the closed loop, and excludes a duration.
    for bad in [
        LoadArgs {
            rate: Some("100".into()),
            requests: Some(10),
            ..args(url(&mock))
        },
        LoadArgs {
            concurrency: Some(2),
            requests: Some(10),
            duration: Some("1s".into()),
            ..args(url(&mock))
        },
    ] {
        let err = bad.plan().unwrap_err().to_string();
        assert!(err.contains("--requests needs --concurrency"), "{err}");
    }
}

#[test]
fn every_providers_stream_keeps_the_latency_model() {
    let mock = start_mock(Config {
        latency: LatencyModel {
            ttft: "50ms".parse().unwrap(),
            itl: "10ms".parse().unwrap(),
            tokens: "6".parse().unwrap(),
            ..LatencyModel::default()
        },
        ..Config::default()
    });
    let base = format!("http://{}", mock.local_addr());
    let user = "Say hello.";
    let cases = [
        (
            format!("{base}/openai/deployments/d/chat/completions?api-version=2024-10-21"),
            serde_json::json!({"messages": [{"role": "user", "content": user}], "stream": true}),
        ),
        (
            format!("{base}/v1beta/models/g:streamGenerateContent?alt=sse"),
            serde_json::json!({"contents": [{"parts": [{"text": user}]}]}),
        ),
        (
            format!("{base}/model/m/converse-stream"),
            serde_json::json!({"messages": [{"role": "user", "content": [{"text": user}]}]}),
        ),
    ];
    for (target, body) in cases {
        let (result, _) = run(
            LoadArgs {
                rate: Some("20".into()),
                duration: Some("1s".into()),
                request: loadgen::options::RequestFlags {
                    body: Some(body.to_string()),
                    ..Default::default()
                },
                ..args(target.clone())
            },
            vec![],
        )
        .unwrap();
        let r = &result.runs[0];
        assert_eq!(r.ok, 20, "{target}: {:?}", r.errors);
        let m = &r.metrics;
        // Never early, late by a little; room for a busy machine. As in
        // `stream_metrics_match_the_mock_latency_model`, the lower bounds hold on any host, the
        // upper ones are the precision run's.
        let (ttft, itl) = (m["ttft_service"].p50, m["itl"].p50);
        let precise = precision_run();
        assert!(
            ttft >= 50_000 && (!precise || ttft <= 65_000),
            "{target}: ttft {ttft} us"
        );
        assert!(
            itl >= 8_000 && (!precise || itl <= 13_000),
            "{target}: itl {itl} us"
        );
        assert_eq!(m["output_chunks"].min, 6, "{target}");
        assert_eq!(m["output_tokens"].max, 6, "{target}");
    }
}
