//! The `loadgen` binary: exit codes, profiles, outputs.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::io::Read as _;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{loadgen, precision_run, read_result, temp_dir};

/// Whether an invalid reason is only about loadgen's own timing (its schedule lag, its send
/// delay, a rate it did not keep up with): what a busy host makes any generator do, and so no
/// fault of the code under test.
fn timing_reason(reason: &str) -> bool {
    ["schedule lag", "send delay", "did not keep up"]
        .iter()
        .any(|r| reason.contains(r))
}

#[test]
fn usage_and_setup_errors_exit_2_with_the_expected_format() {
    let cases: [(&[&str], &str); 8] = [
        (&["overhead"], "missing --direct"),
        (
            &["overhead", "--direct", "http://127.0.0.1:1/"],
            "missing --gateway NAME=URL",
        ),
        (
            &[
                "overhead",
                "--direct",
                "http://127.0.0.1:1/",
                "--gateway",
                "gw=http://127.0.0.1:1/",
            ],
            "cannot connect",
        ),
        (&["run", "--rate", "5kx"], "like 5000 or 5k"),
        (
            &["run", "--target", "ftp://x"],
            "expected http://HOST:PORT/PATH",
        ),
        (
            &["run", "--target", "http://127.0.0.1:1/v1/chat/completions"],
            "cannot connect",
        ),
        (
            &["run", "--preset", "/nonexistent.toml"],
            "cannot read preset",
        ),
        (&["run", "--duration", "soon"], "expected a duration"),
    ];
    for (args, expected) in cases {
        let out = loadgen().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let out = loadgen().args(["run", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_demo_runs_from_a_profile_and_writes_json_and_hgrm() {
    let dir = temp_dir("demo");
    let profile = dir.join("quick.toml");
    std::fs::write(
        &profile,
        "rate = 500\nduration = \"1s\"\nscenario = \"chat-stream\"\nquiet = true\n",
    )
    .unwrap();
    let out_json = dir.join("result.json");
    let hgrm = dir.join("hgrm");
    let out = loadgen()
        .args(["run", "--preset"])
        .arg(&profile)
        .args(["--rate", "300", "--out"])
        .arg(&out_json)
        .arg("--hgrm")
        .arg(&hgrm)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let code = out.status.code();
    // 0, or 1 for the generator's own timing alone (a busy host makes it late): every reason
    // the result gives is a timing one.
    assert!(
        matches!(code, Some(0 | 1)),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("scenario chat-stream"), "{stdout}");
    assert!(stdout.contains("ttft"), "{stdout}");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    let reasons: Vec<&str> = result["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|run| run["validity"]["reasons"].as_array().unwrap())
        .map(|reason| reason.as_str().unwrap())
        .collect();
    assert!(
        code == Some(0) || (!reasons.is_empty() && reasons.iter().all(|r| timing_reason(r))),
        "exit {code:?}: {reasons:?}"
    );
    // On a quiet host: valid, or late by its schedule lag at most.
    if precision_run() {
        assert!(
            code == Some(0) || stdout.contains("invalid: schedule lag"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The flag won over the profile; the profile's scenario held.
    assert_eq!(result["plan"]["load"]["rate"], 300.0);
    assert_eq!(result["runs"][0]["requests"], 300);
    assert!(result["mock"].as_str().unwrap().contains("listen"));
    let ttft = std::fs::read_to_string(hgrm.join("1-chat-stream.ttft.hgrm")).unwrap();
    assert!(ttft.contains("Total count    ="), "{ttft}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_failed_threshold_exits_1_and_says_so() {
    let out = loadgen()
        .args([
            "run",
            "--rate",
            "200",
            "--duration",
            "1s",
            "--scenario",
            "chat",
            "--quiet",
            "--max-p99",
            "1us",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("over --max-p99"), "{err}");
}

/// A target that accepts connections and reads requests but never answers (each connection is
/// held until the client closes it), and the number of requests (`POST`s) it has been sent:
/// loadgen's probe of whether a target is a gatebench mock, a `GET`, is not one.
fn stalled_target() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let posts = Arc::new(AtomicUsize::new(0));
    let counted = posts.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let counted = counted.clone();
            std::thread::spawn(move || {
                // One request at most per connection: its answer never comes.
                let (mut head, mut buf) = (Vec::new(), [0u8; 4096]);
                loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if head.len() < 5 {
                        head.extend_from_slice(&buf[..n]);
                        if head.starts_with(b"POST ") {
                            counted.fetch_add(1, SeqCst);
                        }
                    }
                }
            });
        }
    });
    (addr, posts)
}

/// Starts `loadgen run` against a stalled target, writing its result to `out`; with the
/// target's count of requests sent to it.
fn run_stalled(out: &std::path::Path, grace: &str) -> (std::process::Child, Arc<AtomicUsize>) {
    let (addr, posts) = stalled_target();
    let target = format!("http://{addr}/v1/chat/completions");
    let child = loadgen()
        .args([
            "run",
            "--target",
            &target,
            "--rate",
            "50",
            "--duration",
            "60s",
        ])
        .args([
            "--timeout",
            "30s",
            "--grace",
            grace,
            "--connections",
            "4",
            "--quiet",
        ])
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, posts)
}

fn interrupt(child: &std::process::Child) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// Waits for the child, at most `limit`; returns its exit code and stderr.
fn finish(mut child: std::process::Child, limit: Duration) -> (i32, String) {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A run against a stalled target with `grace`, sent SIGINT once its requests are waiting;
/// returns it and where it writes its result.
fn interrupted(name: &str, grace: &str) -> (std::process::Child, std::path::PathBuf) {
    let out = temp_dir(name).join("result.json");
    let (mut child, posts) = run_stalled(&out, grace);
    // A request reaches the target only once the run has started, and so once loadgen has
    // taken SIGINT over: from then on the signal stops the run.
    let limit = Duration::from_secs(30);
    let started = Instant::now();
    while posts.load(SeqCst) == 0 {
        if started.elapsed() > limit || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "no request reached the stalled target: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    interrupt(&child);
    (child, out)
}

#[test]
fn sigint_stops_sending_waits_the_grace_and_writes_an_interrupted_result() {
    let (child, out) = interrupted("sigint", "1s");
    // The grace (1 s), not the 30 s timeout, bounds the wait.
    let (code, stderr) = finish(child, Duration::from_secs(15));
    assert_eq!(code, 130, "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let result = read_result(&out);
    let run = &result["runs"][0];
    assert_eq!(run["interrupted"], true);
    let (requests, failed) = (
        run["requests"].as_u64().unwrap(),
        run["failed"].as_u64().unwrap(),
    );
    // Every request sent was still waiting: all are accounted for, as cancelled.
    assert!(requests > 0);
    assert_eq!(requests, failed);
    assert_eq!(run["errors"]["cancelled"].as_u64(), Some(requests));
    // Written atomically: no temporary file is left beside it.
    assert!(!out.with_extension("tmp").exists());
}

#[test]
fn a_second_sigint_stops_waiting_at_once() {
    let (mut child, out) = interrupted("sigint-twice", "60s");
    // The second is sent once loadgen says it took the first (one sent sooner could be merged
    // with it, one signal being pending at a time); the 60 s grace, four times the limit,
    // shows that the waiting was stopped.
    let stderr = child.stderr.take().unwrap();
    let (said, heard) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.starts_with("loadgen: stopping:") {
                let _ = said.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    heard
        .recv_timeout(Duration::from_secs(30))
        .expect("loadgen says it took the first signal");
    interrupt(&child);
    let (code, _) = finish(child, Duration::from_secs(15));
    let stderr = reader.join().unwrap();
    assert!(stderr.contains("stopping now"), "{stderr}");
    assert_eq!(code, 130, "{stderr}");
    let result = read_result(&out);
    assert!(result["runs"][0]["errors"]["cancelled"].as_u64().unwrap() > 0);
}

#[test]
fn impossible_plans_are_refused_before_any_load() {
    let target = format!("http://{}/v1/chat/completions", stalled_target().0);
    for (args, expected) in [
        (vec!["--max-pending", "0"], "--max-pending"),
        (vec!["--duration", "0s"], "--duration"),
        (vec!["--connections", "1000"], "open files"),
    ] {
        let mut cmd = loadgen();
        // An open-file limit of 256, soft and hard, whatever this machine allows.
        // SAFETY: setrlimit is async-signal-safe, and the closure touches nothing else.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 256,
                    rlim_max: 256,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let output = cmd
            .args(["run", "--target", &target, "--quiet"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn a_reader_that_goes_away_loses_no_result() {
    let dir = temp_dir("closed-stdout");
    let out = dir.join("result.json");
    // The demo (embedded mock), with stdout a pipe whose reader is gone before the report.
    let mut child = loadgen()
        .args([
            "run",
            "--rate",
            "200",
            "--duration",
            "1s",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert!(
        status.code() == Some(0) || status.code() == Some(1),
        "{status}"
    );
    let result = read_result(&out);
    assert_eq!(result["runs"].as_array().unwrap().len(), 2);
}

#[test]
fn requests_past_max_pending_are_counted_as_backlog_not_held() {
    // 100k req/s with a 30 s timeout used to be refused; now the requests held at once are
    // capped, and those due past the cap are counted as their own kind.
    let target = format!("http://{}/v1/chat/completions", stalled_target().0);
    let out = temp_dir("backlog").join("result.json");
    let output = loadgen()
        .args([
            "run",
            "--target",
            &target,
            "--rate",
            "100k",
            "--duration",
            "1s",
        ])
        .args([
            "--timeout",
            "30s",
            "--grace",
            "100ms",
            "--max-pending",
            "200",
        ])
        .args(["--connections", "4", "--quiet"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    // Nothing answered, so the verdict is invalid (exit 1); the plan was not refused (exit 2).
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result = read_result(&out);
    assert_eq!(result["plan"]["max_pending"], 200);
    let run = &result["runs"][0];
    let errors = &run["errors"];
    let (backlog, cancelled) = (
        errors["backlog"].as_u64().unwrap_or(0),
        errors["cancelled"].as_u64().unwrap_or(0),
    );
    // At most 200 were ever held; they end cancelled by the grace, the rest are backlog.
    assert!(cancelled <= 200, "{errors}");
    assert!(backlog > 10 * cancelled, "{errors}");
    assert_eq!(
        run["failed"].as_u64().unwrap(),
        backlog + cancelled,
        "{errors}"
    );
}

#[test]
fn flags_only_run_acts_on_are_refused_by_the_commands_that_would_ignore_them() {
    let target = ["--gateway", "gw=http://127.0.0.1:1/v1/chat/completions"];
    let commands: [&[&str]; 5] = [
        &["compare"],
        &["sweep", "--levels", "1,2"],
        &["capacity"],
        &["ladder", "--levels", "1,2"],
        &["profile"],
    ];
    let flags: [(&[&str], &str); 4] = [
        (&["--metrics-listen", "127.0.0.1:9464"], "--metrics-listen"),
        (&["--shard", "0/2"], "--shard"),
        (&["--hgrm", "/tmp/x"], "--hgrm"),
        (&["--hdr-log", "/tmp/x"], "--hdr-log"),
    ];
    for command in commands {
        for (flag, name) in flags {
            let out = loadgen()
                .args(command)
                .args(target)
                .args(flag)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command:?} {flag:?}: {said}");
            let expected = format!("{name} ");
            assert!(
                said.contains(&expected) && said.contains("only `loadgen run` takes it"),
                "{command:?} {flag:?}: {said}"
            );
        }
    }
    // From the environment too, naming the variable.
    let out = loadgen()
        .args(["compare"])
        .args(target)
        .env("LOADGEN_METRICS_LINGER", "3s")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("is LOADGEN_METRICS_LINGER set?"), "{said}");
}

/// The former names of renamed flags, variables, keys and commands are still read: `--profile`
/// and `LOADGEN_PROFILE` (now `--preset`, `LOADGEN_PRESET`), `--pin` and the key `pin` (now
/// `--cores`, `cores`), `check-profile` (now `check-preset`) and corpus's `--preset` (now
/// `--workload`).
#[test]
fn former_names_are_still_read() {
    let dir = temp_dir("former");
    let preset = dir.join("old.toml");
    std::fs::write(&preset, "rate = 700\npin = \"0\"\n").unwrap();
    let printed = |cmd: &mut std::process::Command| {
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for text in [
        printed(
            loadgen()
                .args(["run", "--print-config", "--profile"])
                .arg(&preset),
        ),
        printed(
            loadgen()
                .args(["run", "--print-config", "--preset"])
                .arg(&preset),
        ),
        printed(
            loadgen()
                .args(["run", "--print-config"])
                .env("LOADGEN_PROFILE", &preset),
        ),
    ] {
        assert!(text.contains("rate = \"700\""), "{text}");
        assert!(text.contains("cores = \"0\""), "{text}");
    }
    let flag = printed(loadgen().args(["run", "--print-config", "--pin", "0"]));
    assert!(flag.contains("cores = \"0\""), "{flag}");
    for command in ["check-profile", "check-preset"] {
        let text = printed(loadgen().args([command, "run"]).arg(&preset));
        assert!(text.starts_with("ok: "), "{command}: {text}");
    }
    for flag in ["--preset", "--workload"] {
        let out = dir.join(format!("corpus{flag}.jsonl"));
        printed(
            loadgen()
                .args(["corpus", "--count", "3", flag, "azure-code", "--out"])
                .arg(&out),
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
    }
}
