//! `loadgen sweep` and `loadgen ladder` against test gateways of known behaviour: a saturated
//! baseline is flagged, a connection cap is counted as failures, a buffering gateway is named.

use gatebench_tests::faulty::{start_faulty, Fault};
use gatebench_tests::gateway::{start_gateway, GatewayOptions};
use gatebench_tests::{precision_run, start_mock};
use loadgen::commands::ladder::run_ladder;
use loadgen::commands::sweep::run_sweep;
use loadgen::options::CompareArgs;
use loadgen::options::LadderArgs;
use loadgen::options::SweepArgs;
use loadgen::LoadArgs;

fn url(addr: std::net::SocketAddr) -> String {
    format!("http://{addr}/v1/chat/completions")
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gatebench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}.json"))
}

#[test]
fn a_sweep_flags_the_level_where_the_baseline_saturates() {
    // An upstream that serves one request at a time in 2 ms: one client sees ~2 ms (more on a
    // loaded machine), sixteen see ~32 ms at p99, far over twice the floor.
    let upstream = start_faulty(Fault::OneAtATime);
    let (result, _) = run_sweep(
        SweepArgs {
            levels: Some("1,16".into()),
            level_kind: None,
            compare: CompareArgs {
                load: LoadArgs {
                    duration: Some("1s".into()),
                    quiet: true,
                    ..LoadArgs::default()
                },
                targets: loadgen::options::GatewayFlags {
                    direct: Some(url(upstream)),
                    gateways: vec![format!("same={}", url(upstream))],
                    ..Default::default()
                },
                judge: loadgen::options::JudgeFlags {
                    trials: Some(1),
                    ..Default::default()
                },
                ..CompareArgs::default()
            },
        },
        vec![],
    )
    .unwrap();
    assert_eq!(result.levels.len(), 2);
    let (one, sixteen) = (&result.levels[0], &result.levels[1]);
    // Every answer takes 2 ms at least, on any host; how little more is the precision run's.
    let precise = precision_run();
    assert!(
        result.floor_p99_us >= 1_500.0 && (!precise || result.floor_p99_us < 15_000.0),
        "{}",
        result.floor_p99_us
    );
    // The floor is the first level's own p99, which is never over twice itself.
    assert!(!one.baseline_saturated);
    // A level is flagged when its p99 is over twice the floor. Whether sixteen clients' is
    // depends on how much a stall on this host added to the floor's, so the flag itself is
    // the precision run's.
    assert_eq!(
        sixteen.baseline_saturated,
        sixteen.direct_p99_us > 2.0 * result.floor_p99_us,
        "{} µs against a floor of {} µs",
        sixteen.direct_p99_us,
        result.floor_p99_us
    );
    assert!(
        !precise || sixteen.baseline_saturated,
        "{} µs",
        sixteen.direct_p99_us
    );
    // The headline comes from the highest level that was not saturated.
    assert_eq!(result.headline.len(), 1);
    let unsaturated = if sixteen.baseline_saturated {
        1.0
    } else {
        16.0
    };
    assert_eq!(result.headline[0].level, unsaturated);
    for level in &result.levels {
        assert_eq!(level.summary.len(), 2);
        assert!(level.summary.iter().all(|s| s.ok > 0 && s.ok == s.requests));
    }
    gatebench_tests::schema::assert_matches(&result, "sweep.schema.json");
    let path = temp("sweep");
    loadgen::report::output::write_json(&result, &path).unwrap();
    gatebench_tests::reports::check_reports(&path, "level,target,requests");
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn a_ladder_counts_refusals_and_names_a_buffering_gateway() {
    let mock = start_mock(mock_upstream::Config {
        latency: gatebench_shared::LatencyModel {
            itl: "2ms".parse().unwrap(),
            tokens: "10".parse().unwrap(),
            ..Default::default()
        },
        ..mock_upstream::Config::default()
    });
    let upstream = mock.local_addr();
    let pass = start_gateway(upstream, GatewayOptions::default());
    let capped = start_gateway(
        upstream,
        GatewayOptions {
            max_connections: Some(20),
            ..GatewayOptions::default()
        },
    );
    let buffering = start_gateway(
        upstream,
        GatewayOptions {
            buffer_streams: true,
            ..GatewayOptions::default()
        },
    );
    let (result, _) = run_ladder(
        LadderArgs {
            levels: Some("10,50".into()),
            pause: loadgen::options::SettleFlag {
                settle: Some("200ms".into()),
            },
            load: LoadArgs {
                quiet: true,
                request: loadgen::options::RequestFlags {
                    timeout: Some("5s".into()),
                    ..Default::default()
                },
                ..LoadArgs::default()
            },
            targets: loadgen::options::GatewayFlags {
                direct: Some(url(upstream)),
                gateways: vec![
                    format!("pass={}", url(pass)),
                    format!("capped={}", url(capped)),
                    format!("buffering={}", url(buffering)),
                ],
                sample: vec![format!("tests={}", std::process::id())],
                ..Default::default()
            },
        },
        vec![],
    )
    .unwrap();
    let rung = |level: usize, name: &str| {
        result
            .rungs
            .iter()
            .find(|r| r.level == level && r.name == name)
            .unwrap()
            .clone()
    };
    for level in [10, 50] {
        let direct = rung(level, "direct");
        assert_eq!((direct.completed, direct.failed), (level, 0));
        assert_eq!(direct.chunks_p50, 10.0);
        // Ten tokens 2 ms apart: the first output comes before the last by about 18 ms.
        assert!(direct.spread_p50_us > 10_000.0, "{direct:?}");
        assert_eq!(rung(level, "pass").delivery, "passed through");
        assert_eq!(rung(level, "buffering").delivery, "buffered");
    }
    let capped = rung(50, "capped");
    assert_eq!(capped.completed, 20, "{capped:?}");
    assert_eq!(capped.failed, 30);
    assert_eq!(capped.errors.values().sum::<u64>(), 30);
    assert_eq!(rung(10, "capped").completed, 10);
    // The test process itself was sampled: idle, then under load.
    assert_eq!(result.footer.resources.len(), 1);
    assert!(result.footer.resources[0].load_rss_peak_bytes > 0);
    assert!(result.footer.resources[0].samples.len() >= 4);

    gatebench_tests::schema::assert_matches(&result, "ladder.schema.json");
    let path = temp("ladder");
    loadgen::report::output::write_json(&result, &path).unwrap();
    gatebench_tests::reports::check_reports(&path, "streams,target,completed");
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn a_sweep_from_a_profile_sends_a_fixed_count_per_level_and_is_marked_exploratory() {
    let mock = start_mock(mock_upstream::Config::default());
    let gateway = start_gateway(mock.local_addr(), GatewayOptions::default());
    let profile = temp("sweep-profile").with_extension("toml");
    std::fs::write(
        &profile,
        "levels = [1, 4]\nlevel-kind = \"concurrency\"\nrequests = 40\ntrials = 1\n\
         scenario = \"chat\"\n",
    )
    .unwrap();
    let (result, code) = run_sweep(
        SweepArgs {
            compare: CompareArgs {
                load: LoadArgs {
                    preset: Some(profile.clone()),
                    quiet: true,
                    ..LoadArgs::default()
                },
                targets: loadgen::options::GatewayFlags {
                    direct: Some(url(mock.local_addr())),
                    gateways: vec![format!("fwd={}", url(gateway))],
                    ..Default::default()
                },
                ..CompareArgs::default()
            },
            ..SweepArgs::default()
        },
        vec![],
    )
    .unwrap();
    assert_eq!(code, 0, "{:?}", result.footer.invalid_reasons);
    assert!(result.exploratory);
    assert_eq!(result.header.plan.requests, Some(40));
    assert_eq!(
        result.levels.iter().map(|l| l.level).collect::<Vec<_>>(),
        [1.0, 4.0]
    );
    for level in &result.levels {
        for summary in &level.summary {
            assert_eq!((summary.requests, summary.ok), (40, 40), "{}", summary.name);
        }
    }
    assert!(loadgen::report::sweep::terminal(&result).contains("Exploratory"));
    gatebench_tests::schema::assert_matches(&result, "sweep.schema.json");
}
