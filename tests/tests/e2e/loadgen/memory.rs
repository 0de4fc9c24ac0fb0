//! `loadgen profile --memory` against servers whose allocations are known: a C server built here
//! that makes exactly K calls to malloc of SIZE bytes per request (and no other), and a Python
//! server that makes K more objects per request under `PYTHONMALLOC=malloc`; the refusals said
//! before any load; nothing left on the machine.

use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use gatebench_tests::start_mock;
use loadgen::commands::profile::run_profile;
use loadgen::options::{CompareArgs, MemoryArgs, ProfileArgs};
use loadgen::results::profile::ProfileResult;
use loadgen::LoadArgs;

/// A server process, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits for the server's first line on its standard output ("listening").
fn started(mut child: Child, port: u16) -> Server {
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening"), "the server said {line:?}");
    Server {
        child,
        url: format!("http://127.0.0.1:{port}/v1/chat/completions"),
    }
}

/// The C server, compiled with frame pointers into a scratch folder once per test process:
/// the tests that run it at the same time wait for that one build (a test that found the file
/// while another was still writing it got "Permission denied" running it).
fn c_server(k: u32, size: u32) -> Server {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let bin = BUILT.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("gatebench-memory-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("alloc-server");
        let built = Command::new("cc")
            .args(["-O0", "-fno-omit-frame-pointer", "-o"])
            .arg(&bin)
            .arg(fixture("alloc-server.c"))
            .status()
            .expect("a C compiler (cc)");
        assert!(built.success());
        bin
    });
    let port = free_port();
    let child = Command::new(bin)
        .args([port.to_string(), k.to_string(), size.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    started(child, port)
}

fn python_server(k: u32, size: u32, malloc: bool) -> Server {
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.arg(fixture("alloc_server.py"))
        .args([port.to_string(), k.to_string(), size.to_string()])
        .env("PYTHONUNBUFFERED", "1")
        .stdout(Stdio::piped());
    if malloc {
        cmd.env("PYTHONMALLOC", "malloc");
    }
    started(cmd.spawn().unwrap(), port)
}

fn args(server: &Server, memory: MemoryArgs) -> ProfileArgs {
    ProfileArgs {
        pid: Some(server.child.id()),
        memory: MemoryArgs {
            memory: true,
            rest: memory.rest.clone().or(Some("300ms".into())),
            ..memory
        },
        compare: CompareArgs {
            load: LoadArgs {
                rate: Some("200".into()),
                duration: Some("1500ms".into()),
                warmup: Some("300ms".into()),
                connections: Some(4),
                quiet: true,
                ..LoadArgs::default()
            },
            targets: loadgen::options::GatewayFlags {
                gateways: vec![format!("alloc={}", server.url)],
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

fn profile(args: ProfileArgs) -> ProfileResult {
    run_profile(args, vec!["loadgen".into(), "profile".into()])
        .unwrap()
        .0
}

/// True when bpftrace may count here; where it may not, the test says so and checks that the
/// result says why (set GATEBENCH_REQUIRE_BPFTRACE to make that a failure).
fn bpftrace_counted(result: &ProfileResult) -> bool {
    let m = result.memory.as_ref().expect("a memory profile");
    if m.source.is_some() && m.trials.iter().any(|t| t.counted) {
        return true;
    }
    let why = m.unavailable.join("; ");
    assert!(!why.is_empty(), "nothing counted, and no reason given");
    assert!(
        std::env::var_os("GATEBENCH_REQUIRE_BPFTRACE").is_none(),
        "bpftrace could not count: {why}"
    );
    eprintln!("bpftrace cannot count here, so the counts are not checked: {why}");
    false
}

/// Held by every test that probes the C allocator. Its uprobes are one resource for the whole
/// machine, and the bpftrace processes this test binary starts are all its children, so a test
/// that checks none is left after its run ([`nothing_left`]) would see another's still at work:
/// the tests that probe take turns (for the resource, not for each other's load).
fn probing() -> std::sync::MutexGuard<'static, ()> {
    static PROBES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    PROBES.lock().unwrap_or_else(|e| e.into_inner())
}

/// No bpftrace started by this process is still running, and no uprobe it set is left.
fn nothing_left() {
    let me = std::process::id().to_string();
    let out = Command::new("pgrep")
        .args(["-P", &me, "bpftrace"])
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "bpftrace still running: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    for events in [
        "/sys/kernel/tracing/uprobe_events",
        "/sys/kernel/debug/tracing/uprobe_events",
    ] {
        if let Ok(text) = std::fs::read_to_string(events) {
            assert!(!text.contains("malloc"), "uprobes left in {events}: {text}");
        }
    }
}

#[test]
fn the_c_allocator_counts_exactly_k_allocations_of_size_bytes_per_request() {
    let _probes = probing();
    let (k, size) = (7, 1000);
    let server = c_server(k, size);
    let dir = std::env::temp_dir().join(format!("gatebench-memory-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("alloc.json");
    let mut a = args(&server, MemoryArgs::default());
    a.compare.load.out = Some(out.clone());
    let result = profile(a);
    let names: Vec<&str> = result
        .compare
        .header
        .targets
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["alloc", "alloc+memory"]);
    nothing_left();
    gatebench_tests::schema::assert_matches(&result, "profile.schema.json");
    if !bpftrace_counted(&result) {
        return;
    }
    let m = result.memory.as_ref().unwrap();
    assert_eq!(m.source.as_deref(), Some("c-allocator"));
    assert!(m.counts.contains("C allocator"), "{}", m.counts);
    let within = |got: f64, want: f64| (got - want).abs() <= want * 0.03;
    let allocs = m.allocs_per_request.unwrap();
    let bytes = m.bytes_per_request.unwrap();
    assert!(within(allocs.estimate, k as f64), "{allocs:?}");
    assert!(within(bytes.estimate, (k * size) as f64), "{bytes:?}");
    let frees = m.frees_per_request.unwrap();
    assert!(within(frees.estimate, k as f64), "{frees:?}");
    for t in &m.trials {
        assert!(t.counted && t.requests > 200, "{t:?}");
        // Exactly K a request, but for the requests in flight at the window's edges (one a
        // connection at most, at each edge), whose calls fall on either side of them.
        let mallocs = t.calls.get("malloc").copied().unwrap_or(0) as f64;
        let want = (k as u64 * t.requests) as f64;
        assert!((mallocs - want).abs() <= 8.0 * k as f64, "{t:?}");
        // Everything a request allocated it freed: what stays live is at most the requests in
        // flight at the window's end.
        assert!(
            t.live_at_end_bytes.unwrap() <= (4 * k * size) as f64,
            "{t:?}"
        );
        assert!(t.rest_before.is_some() && t.rest_after.is_some(), "{t:?}");
    }
    let growth = m.growth.unwrap();
    assert!(
        !growth.flagged,
        "a server that frees all it allocates: {growth:?}"
    );
    // The stacks name the server's own function; the flame graph is written beside the result.
    let allocated = m.allocated.as_ref().unwrap();
    assert!(allocated.share_containing("serve") > 0.9, "{allocated:?}");
    assert!(
        m.files.iter().any(|f| f.ends_with(".allocated.svg")),
        "{:?}",
        m.files
    );
    let text = loadgen::report::profile::terminal(&result);
    assert!(
        text.contains("allocs_per_request") && text.contains("c-allocator"),
        "{text}"
    );
    let page = loadgen::report::profile::html(&result);
    assert!(page.contains("Bytes allocated, by stack") && page.contains("<svg"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn python_under_pythonmalloc_counts_the_objects_a_request_adds() {
    let _probes = probing();
    let size = 4096;
    let run = |k: u32| {
        let server = python_server(k, size, true);
        profile(args(&server, MemoryArgs::default()))
    };
    let (none, ten) = (run(0), run(10));
    nothing_left();
    if !bpftrace_counted(&none) || !bpftrace_counted(&ten) {
        return;
    }
    let (a, b) = (none.memory.unwrap(), ten.memory.unwrap());
    assert_eq!(b.source.as_deref(), Some("python"));
    let added = b.allocs_per_request.unwrap().estimate - a.allocs_per_request.unwrap().estimate;
    // Ten bytes objects of SIZE are ten calls to malloc more (each object and its bytes in one
    // block); the range leaves room for the interpreter's own bookkeeping, and, outside a
    // precision run, for the requests in flight at a window's edges (one a connection, each
    // about 40 calls, over some 200 requests: about one call a request either way).
    let range = if gatebench_tests::precision_run() {
        9.0..=25.0
    } else {
        7.0..=30.0
    };
    assert!(
        range.contains(&added),
        "{added} more allocations per request"
    );
    let bytes = b.bytes_per_request.unwrap().estimate - a.bytes_per_request.unwrap().estimate;
    assert!(
        bytes >= 10.0 * size as f64 * 0.97,
        "{bytes} more bytes per request"
    );
}

#[test]
fn a_source_that_cannot_work_is_said_and_the_load_still_runs() {
    let _probes = probing();
    // A CPython without PYTHONMALLOC=malloc: its small objects never reach the C allocator.
    let server = python_server(0, 16, false);
    let result = profile(args(&server, MemoryArgs::default()));
    let m = result.memory.as_ref().unwrap();
    let why = m.unavailable.join("; ");
    assert!(why.contains("PYTHONMALLOC=malloc"), "{why}");
    assert!(m.source.is_none());
    let names: Vec<&str> = result
        .compare
        .header
        .targets
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["alloc"], "no probed target without a source");
    assert!(result.compare.runs.iter().all(|r| r.run.ok > 0));

    // A bpftrace that is not there.
    let mock = start_mock(mock_upstream::Config::default());
    let c = c_server(1, 16);
    let mut a = args(
        &c,
        MemoryArgs {
            bpftrace: Some("/nonexistent/bpftrace".into()),
            ..MemoryArgs::default()
        },
    );
    a.compare.targets.direct = Some(format!("http://{}/v1/chat/completions", mock.local_addr()));
    let result = profile(a);
    let why = result.memory.as_ref().unwrap().unavailable.join("; ");
    assert!(why.contains("apt-get install bpftrace"), "{why}");
    assert!(result.compare.runs.iter().all(|r| r.run.ok > 0));
}

#[test]
fn bad_memory_options_are_refused_before_any_load() {
    let server = c_server(1, 16);
    let refused = |memory: MemoryArgs| {
        run_profile(args(&server, memory), vec!["loadgen".into()])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let source = refused(MemoryArgs {
        memory_source: Some("ruby".into()),
        ..MemoryArgs::default()
    });
    assert!(source.contains("auto, c, python, go or node"), "{source}");
    let price = refused(MemoryArgs {
        price: Some("cheap".into()),
        ..MemoryArgs::default()
    });
    assert!(price.contains("--price"), "{price}");
    let rest = refused(MemoryArgs {
        rest: Some("soon".into()),
        ..MemoryArgs::default()
    });
    assert!(rest.contains("--rest"), "{rest}");
    let mut alone = args(&server, MemoryArgs::default());
    alone.memory.memory = false;
    alone.memory.price = Some("0.1/h,2cpu,4GiB".into());
    let e = run_profile(alone, vec!["loadgen".into()])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("go with --memory"), "{e}");
}

#[test]
fn a_price_is_modeled_and_labelled_as_a_model() {
    let _probes = probing();
    let server = c_server(2, 64);
    let result = profile(args(
        &server,
        MemoryArgs {
            price: Some("0.166/h,4cpu,16GiB".into()),
            live: Some("off".into()),
            ..MemoryArgs::default()
        },
    ));
    nothing_left();
    gatebench_tests::schema::assert_matches(&result, "profile.schema.json");
    if bpftrace_counted(&result) {
        // Without following frees (`--live off`) the counts are the same, the live ones none.
        let m = result.memory.as_ref().unwrap();
        let allocs = m.allocs_per_request.unwrap().estimate;
        // Two a request, but for the requests in flight at a window's edges.
        assert!((allocs - 2.0).abs() <= 0.1, "{allocs}");
        assert!(m.trials.iter().all(|t| t.live_at_end_bytes.is_none()));
    }
    let cost = result.cost_model.as_ref().expect("a modeled cost");
    assert!(cost.modeled);
    assert!(
        cost.usd_per_million_requests > 0.0 && cost.requests_per_usd > 0.0,
        "{cost:?}"
    );
    let text = loadgen::report::profile::terminal(&result);
    assert!(text.contains("modeled"), "{text}");
}

#[test]
fn a_stopped_run_leaves_no_bpftrace_behind() {
    let _probes = probing();
    const LOADGEN: &str = env!("CARGO_BIN_EXE_e2e-loadgen");
    let server = c_server(1, 16);
    // One trial: the gateway's own run (4 s), then its probed run, during which it is stopped.
    let mut child = Command::new(LOADGEN)
        .args(["profile", "--memory", "--rest", "100ms", "--rate", "100"])
        .args(["--duration", "4s", "--trials", "1", "--quiet"])
        .args(["--pid", &server.child.id().to_string()])
        .arg("--gateway")
        .arg(format!("alloc={}", server.url))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mine = format!("pid == {} &&", child.id());
    let running = || {
        let out = Command::new("pgrep").args(["-f", &mine]).output().unwrap();
        !out.stdout.is_empty()
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !running() && std::time::Instant::now() < until && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let attached = running();
    // Into the probed run's window, then stopped as Ctrl-C does.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    // bpftrace dies with loadgen (it is killed at the window's close, and by the kernel when
    // loadgen ends); the kernel may take a moment to reap it, seconds at most.
    let gone = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        !running()
    });
    assert!(gone, "bpftrace outlived a stopped loadgen ({status})");
    match std::env::var_os("GATEBENCH_REQUIRE_BPFTRACE") {
        Some(_) => assert!(attached, "bpftrace never attached"),
        None if !attached => eprintln!("bpftrace never attached here: only its absence is checked"),
        None => {}
    }
}
