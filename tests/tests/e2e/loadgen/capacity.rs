//! `loadgen capacity` against a target of known capacity: a mock that answers in 10 ms and
//! serves at most 20 connections at once holds at most 20 / 10 ms = 2,000 requests a second;
//! behind a gateway that holds each request 10 ms more, 20 / 20 ms = 1,000.

use gatebench_shared::LatencyModel;
use gatebench_tests::gateway::start_delay_gateway;
use gatebench_tests::start_mock;
use loadgen::commands::capacity::run_capacity;
use loadgen::options::CapacityArgs;
use loadgen::LoadArgs;
use mock_upstream::Config;

use gatebench_tests::load_args::url;

#[test]
fn the_capacity_of_a_known_limit_is_found_within_five_percent_in_eight_runs() {
    let mock = start_mock(Config {
        latency: LatencyModel {
            response: Some("10ms".parse().unwrap()),
            ..LatencyModel::default()
        },
        max_connections: Some(20),
        ..Config::default()
    });
    let gateway = start_delay_gateway(mock.local_addr(), std::time::Duration::from_millis(10));
    let (result, code) = run_capacity(
        CapacityArgs {
            slo: Some("p99<50ms,errors<1%".into()),
            start_rate: Some("500".into()),
            // The direct search is held to 8 below; the thread-per-connection gateway ends
            // requests slower when far overloaded and may take more.
            max_runs: Some(12),
            load: LoadArgs {
                duration: Some("2s".into()),
                warmup: Some("500ms".into()),
                connections: Some(20),
                quiet: true,
                request: loadgen::options::RequestFlags {
                    timeout: Some("5s".into()),
                    ..Default::default()
                },
                ..LoadArgs::default()
            },
            targets: loadgen::options::GatewayFlags {
                direct: Some(url(&mock)),
                gateways: vec![format!("slow=http://{gateway}/v1/chat/completions")],
                ..Default::default()
            },
            ..CapacityArgs::default()
        },
        vec![],
    )
    .unwrap();
    let report = loadgen::report::capacity::terminal(&result);
    // Every step is on record with its objectives, in both searches; the direct one ran at
    // least once (the gateway's runs none when the direct passed no rate to search under).
    assert_eq!(result.searches.len(), 2, "{report}");
    assert!(!result.searches[0].steps.is_empty(), "{report}");
    for s in &result.searches {
        // At most 12 runs, each run again once when the generator fell behind in it.
        assert!(s.steps.len() <= 24, "{report}");
        assert!(s.steps.iter().all(|s| s.judged.len() == 2), "{report}");
    }
    // Where the capacity lies against the analytic 2,000 and 1,000 req/s, and whether the
    // search finds it within its runs, is this machine's precision: a search the generator
    // fell behind in ends there ("limited by generator", exit 1), and a busy host's late sleeps
    // move the knee and flip steps near it. The search's own rules are tested exactly on model
    // targets in its unit tests.
    assert!(code == 0 || code == 1, "{report}");
    if gatebench_tests::precision_run() {
        assert_eq!(code, 0, "{report}");
        known_capacities(&result, &report);
    }
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(value["schema"], "gatebench.loadgen.capacity/1");
    gatebench_tests::schema::assert_matches(&result, "capacity.schema.json");
    // `loadgen report` renders it again.
    let path = std::env::temp_dir().join(format!("gatebench-capacity-{}.json", std::process::id()));
    std::fs::write(&path, value.to_string()).unwrap();
    let md = loadgen::report::render::render(&path, loadgen::options::Format::Md).unwrap();
    let html = loadgen::report::render::render(&path, loadgen::options::Format::Html).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        md.contains("# Capacity within p99<50ms,errors<1%") && md.contains("| slow |"),
        "{md}"
    );
    assert!(html.contains("<table>"));
}

/// The brackets a quiet machine finds: the direct mock's within 10% under the analytic 2,000
/// req/s, the gateway's under 1,000, each to the search's 5% in at most 8 runs (a precision
/// check: a busy machine answers a little late and its timer wakes late; 1,889.5-1,944 req/s
/// was found here in a quiet run).
fn known_capacities(result: &loadgen::results::capacity::CapacityResult, report: &str) {
    let search = &result.searches[0];
    let (lo, hi) = (
        search.bracket.passed.unwrap(),
        search.bracket.failed.unwrap(),
    );
    assert!((1_800.0..=2_010.0).contains(&lo), "{report}");
    assert!(hi > 1_850.0 && hi / lo <= 1.05 + 1e-9, "{report}");
    assert!(search.steps.len() <= 8, "{report}");
    assert!(search.limited_by.is_none(), "{report}");
    // The gateway, searched up to the direct's capacity: about 1,000. The forwarder's 10 ms is
    // a sleep per chunk on a thread per connection: on a loaded 2-core machine it overshoots,
    // and the real ceiling falls short of 1,000 by up to a fifth (840 req/s seen).
    let gateway = &result.searches[1];
    assert_eq!(gateway.ceiling, lo);
    let (glo, ghi) = (
        gateway.bracket.passed.unwrap(),
        gateway.bracket.failed.unwrap(),
    );
    assert!(
        (800.0..=1_010.0).contains(&glo) && ghi / glo <= 1.05 + 1e-9,
        "{report}"
    );
}

#[test]
fn capacity_refuses_what_it_cannot_search() {
    let base = |slo: Option<&str>, load: LoadArgs| CapacityArgs {
        slo: slo.map(String::from),
        load,
        targets: loadgen::options::GatewayFlags {
            direct: Some("http://127.0.0.1:9/v1/chat/completions".into()),
            ..Default::default()
        },
        ..CapacityArgs::default()
    };
    for (args, says) in [
        (base(None, LoadArgs::default()), "needs --slo"),
        (base(Some("p99>5ms"), LoadArgs::default()), "invalid --slo"),
        (
            base(
                Some("p99<5ms"),
                LoadArgs {
                    duration: Some("forever".into()),
                    ..LoadArgs::default()
                },
            ),
            "fixed --duration",
        ),
        (
            CapacityArgs {
                max_runs: Some(1),
                ..base(Some("p99<5ms"), LoadArgs::default())
            },
            "--max-runs 1",
        ),
    ] {
        let err = run_capacity(args, vec![]).unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
    }
}
