//! `loadgen profile` against a forwarder with a deliberately hot function (a process of its
//! own, `hot-forwarder`), whose name must lead the folded stacks; without perf, and with a perf
//! that is refused, the load still runs and the result says why; `--diff` of two profiles.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use gatebench_tests::start_mock;
use loadgen::commands::profile::run_profile;
use loadgen::options::Format;
use loadgen::options::{CompareArgs, ProfileArgs};
use loadgen::report::render::render;
use loadgen::results::profile::ProfileResult;
use loadgen::LoadArgs;

/// The forwarder process, killed when dropped.
struct Forwarder {
    child: Child,
    url: String,
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn forwarder(upstream: std::net::SocketAddr, hot_us: u64) -> Forwarder {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hot-forwarder"))
        .arg(upstream.to_string())
        .arg(hot_us.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    Forwarder {
        child,
        url: format!("http://{}/v1/chat/completions", line.trim()),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "gatebench-profile-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn args(gateway: &Forwarder, direct: Option<String>, out: Option<PathBuf>) -> ProfileArgs {
    ProfileArgs {
        pid: Some(gateway.child.id()),
        compare: CompareArgs {
            load: LoadArgs {
                rate: Some("200".into()),
                duration: Some("1500ms".into()),
                warmup: Some("500ms".into()),
                connections: Some(4),
                out,
                quiet: true,
                ..LoadArgs::default()
            },
            targets: loadgen::options::GatewayFlags {
                direct,
                gateways: vec![format!("hot={}", gateway.url)],
                ..Default::default()
            },
            judge: loadgen::options::JudgeFlags {
                trials: Some(2),
                ..Default::default()
            },
            ..CompareArgs::default()
        },
        ..ProfileArgs::default()
    }
}

fn profile(args: ProfileArgs) -> (ProfileResult, u8) {
    run_profile(args, vec!["loadgen".into(), "profile".into()]).unwrap()
}

/// True when the machine lets perf sample: where it does not, the test says so and checks
/// only what the other tests check.
fn perf_may_sample(result: &ProfileResult) -> bool {
    let missing = result
        .profile
        .unavailable
        .iter()
        .find(|r| r.starts_with("no profile:"));
    if let Some(reason) = missing {
        eprintln!("perf cannot sample here, so the profile is not checked: {reason}");
        return false;
    }
    true
}

#[test]
fn the_hot_function_leads_the_profile_and_the_report_shows_it() {
    let mock = start_mock(mock_upstream::Config::default());
    let hot = forwarder(mock.local_addr(), 400);
    let dir = scratch("hot");
    let out = dir.join("hot.json");
    let direct = format!("http://{}/v1/chat/completions", mock.local_addr());
    let (result, _) = profile(args(&hot, Some(direct), Some(out.clone())));
    // Every target ran in every trial, sampled or not, whatever perf could do.
    let names: Vec<&str> = result
        .compare
        .header
        .targets
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["direct", "twin", "hot", "hot+perf"]);
    assert_eq!(result.compare.runs.len(), 8);
    assert!(result.compare.runs.iter().all(|r| r.run.ok > 0));
    assert_eq!(result.profiler_cost.len(), 4);
    assert!(result.compare.deltas.iter().any(|d| d.gateway == "hot"));
    gatebench_tests::schema::assert_matches(&result, "profile.schema.json");
    if !perf_may_sample(&result) {
        return;
    }
    let on = result.profile.on_cpu.as_ref().unwrap();
    let share = on.share_containing("deliberately_hot_checksum");
    assert!(
        share > 0.5,
        "the hot function holds {:.0}% of {} samples: {:?}",
        share * 100.0,
        on.total(),
        on.top(5)
    );
    assert_eq!(
        result.profile.windows, 2,
        "{:?}",
        result.profile.unavailable
    );
    // 400 µs a request at 200 req/s is 8% of a core: over 2 × 1.5 s at 997 Hz, ~240 samples.
    assert!(on.total() > 60, "{} samples", on.total());
    // Off-CPU: the forwarder's threads wait in recv between requests. (Where the scheduler's
    // switches may not be recorded, say perf_event_paranoid 2 for a user that is not root, the
    // result says so and has none.)
    match result.profile.off_cpu.as_ref() {
        Some(off) => assert!(off.total() > 0 && off.share_containing("[off-cpu: sleeping]") > 0.5),
        None => assert!(
            result
                .profile
                .unavailable
                .iter()
                .any(|r| r.starts_with("no off-CPU profile")),
            "{:?}",
            result.profile.unavailable
        ),
    }

    // The folded files beside the result hold the same stacks.
    let folded = std::fs::read_to_string(dir.join("hot.on-cpu.folded")).unwrap();
    assert_eq!(
        &loadgen::results::profile::Folded::parse(&folded).unwrap(),
        on
    );
    assert_eq!(
        dir.join("hot.off-cpu.folded").exists(),
        result.profile.off_cpu.is_some()
    );
    let svg = std::fs::read_to_string(dir.join("hot.on-cpu.svg")).unwrap();
    assert!(svg.contains("deliberately_hot_checksum") && svg.contains("hot: on-CPU"));

    loadgen::report::output::write_json(&result, &out).unwrap();
    let html = render(&out, Format::Html).unwrap();
    assert!(html.contains("<svg") && html.contains("deliberately_hot_checksum"));
    assert!(html.contains("On-CPU flame graph") && html.contains("profiler"));
    assert!(!html.contains("<script"), "the page has no script");
    let md = render(&out, Format::Md).unwrap();
    assert!(
        md.contains("deliberately_hot_checksum") && md.contains("hot+perf"),
        "{md}"
    );
    render(&out, Format::Csv).unwrap();

    // A second profile of a forwarder that burns less: the difference names the function.
    let cooler = forwarder(mock.local_addr(), 100);
    let out2 = dir.join("cooler.json");
    let (second, _) = profile(ProfileArgs {
        off_cpu: Some("off".into()),
        ..args(&cooler, None, Some(out2.clone()))
    });
    assert!(second.profile.off_cpu.is_none());
    assert_eq!(second.compare.header.targets.len(), 2);
    loadgen::report::output::write_json(&second, &out2).unwrap();
    let (page, summary) = loadgen::commands::profile::diff::render(
        &dir.join("hot.on-cpu.folded"),
        &dir.join("cooler.on-cpu.folded"),
        false,
    )
    .unwrap();
    // The function leads both profiles, so its share need not move much; the graph names it
    // and the two runs' latency is side by side.
    assert!(page.contains("<svg") && page.contains("Latency of the two runs"));
    assert!(page.contains("deliberately_hot_checksum"));
    assert!(summary.contains("latency of the two runs"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_perf_the_load_runs_and_the_result_says_why() {
    let mock = start_mock(mock_upstream::Config::default());
    let gateway = forwarder(mock.local_addr(), 0);
    let (result, _) = profile(ProfileArgs {
        perf: Some(PathBuf::from("/nonexistent/perf")),
        ..args(&gateway, None, None)
    });
    let reasons = result.profile.unavailable.join("; ");
    assert!(
        reasons.contains("was not found") && reasons.contains("linux-perf"),
        "{reasons}"
    );
    assert!(result.profile.on_cpu.is_none() && result.profile.perf.is_none());
    // Nothing samples the gateway, so it runs once a trial, as itself.
    assert_eq!(result.compare.runs.len(), 2);
    assert!(result.compare.runs.iter().all(|r| r.name == "hot"));
    assert!(result.profiler_cost.is_empty());
    assert!(result.compare.runs.iter().all(|r| r.run.ok > 0));
    let text = loadgen::report::profile::terminal(&result);
    assert!(text.contains("was not found"), "{text}");
}

#[test]
fn a_refused_perf_names_perf_event_paranoid() {
    let dir = scratch("refused");
    // Prints what perf prints where perf_event_paranoid forbids sampling.
    let fake = dir.join("perf");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'perf version 6.1'; exit 0; }\n\
         echo 'Error:' >&2\n\
         echo 'Access to performance monitoring and observability operations is limited.' >&2\n\
         echo 'Consider adjusting /proc/sys/kernel/perf_event_paranoid setting' >&2\nexit 255\n",
    )
    .unwrap();
    make_executable(&fake);
    let mock = start_mock(mock_upstream::Config::default());
    let gateway = forwarder(mock.local_addr(), 0);
    let (result, _) = profile(ProfileArgs {
        perf: Some(fake),
        ..args(&gateway, None, None)
    });
    let reasons = result.profile.unavailable.join("; ");
    assert!(
        reasons.contains("kernel.perf_event_paranoid is") && reasons.contains("CAP_PERFMON"),
        "{reasons}"
    );
    assert!(result.compare.runs.iter().all(|r| r.run.ok > 0));
    let _ = std::fs::remove_dir_all(&dir);
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn bad_profile_options_are_refused_before_any_load() {
    let mock = start_mock(mock_upstream::Config::default());
    let gateway = forwarder(mock.local_addr(), 0);
    let refused = |args: ProfileArgs| {
        run_profile(args, vec!["loadgen".into()])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let no_pid = refused(ProfileArgs {
        pid: None,
        ..args(&gateway, None, None)
    });
    assert!(no_pid.contains("--pid"), "{no_pid}");
    let gone = refused(ProfileArgs {
        pid: Some(u32::MAX - 1),
        ..args(&gateway, None, None)
    });
    assert!(gone.contains("a running process"), "{gone}");
    let mut two = args(&gateway, None, None);
    two.compare
        .targets
        .gateways
        .push(format!("other={}", gateway.url));
    assert!(refused(two).contains("one --gateway"));
    let graph = refused(ProfileArgs {
        call_graph: Some("frames".into()),
        ..args(&gateway, None, None)
    });
    assert!(graph.contains("fp, dwarf or lbr"), "{graph}");
}
