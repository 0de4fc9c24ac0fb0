//! The twin `loadgen overhead` chooses with no `--twin`, run as a process of its own: against a
//! gatebench mock on loopback, a second mock process that it starts, names in the result and
//! stops when it ends; when no mock binary can be found, the direct URL again, said plainly.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use gatebench_tests::start_mock;

const LOADGEN: &str = env!("CARGO_BIN_EXE_e2e-loadgen");
const MOCK: &str = env!("CARGO_BIN_EXE_e2e-mock");

/// A short `loadgen overhead` of `loadgen` with no `--twin` against `direct` (as direct and as
/// the one gateway), with `env` set (and `GATEBENCH_MOCK_BIN` unset unless given); its output
/// and its result.
fn overhead(
    loadgen: &Path,
    direct: SocketAddr,
    env: &[(&str, &str)],
) -> (Output, serde_json::Value) {
    let dir = scratch("run");
    let out = dir.join("overhead.json");
    let url = format!("http://{direct}/v1/chat/completions");
    let mut command = Command::new(loadgen);
    command
        .args(["overhead", "--direct", &url, "--gateway"])
        .arg(format!("same={url}"))
        .args(["--rounds", "5", "--warmup-rounds", "1", "--trials", "2"])
        .args([
            "--resamples",
            "100",
            "--scenario",
            "chat",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .env_remove("GATEBENCH_MOCK_BIN");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("loadgen runs");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(&out).expect("the result is written");
    std::fs::remove_dir_all(&dir).unwrap();
    (
        output,
        serde_json::from_str(&text).expect("the result is JSON"),
    )
}

/// A fresh folder of this process's own.
fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("gatebench-twin-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `from` at `to`: a hard link when the file system allows, else a copy.
fn place(from: &str, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

/// The twin's URL and the result's `resolution_source`.
fn twin_of(result: &serde_json::Value) -> (String, String) {
    let targets = result["plan"]["targets"].as_array().unwrap();
    assert_eq!(targets[1]["name"], "twin");
    assert_eq!(targets[1]["info"], result["resolution_source"]);
    let url = targets[1]["url"].as_str().unwrap().to_string();
    (
        url,
        result["resolution_source"].as_str().unwrap().to_string(),
    )
}

/// The pid and address a started twin's disclosure names; asserts both are gone.
fn assert_stopped(source: &str) {
    let pid = source
        .split("pid ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|pid| pid.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no pid in {source}"));
    let addr: SocketAddr = source
        .split(" on ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|addr| addr.parse().ok())
        .unwrap_or_else(|| panic!("no address in {source}"));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the twin mock (pid {pid}) outlived loadgen"
    );
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
        "something still listens on the twin's {addr}"
    );
}

#[test]
fn with_no_twin_loadgen_starts_a_second_mock_names_it_and_stops_it() {
    let mock = start_mock(mock_upstream::Config::default());
    let direct = mock.local_addr();
    let (output, result) = overhead(Path::new(LOADGEN), direct, &[("GATEBENCH_MOCK_BIN", MOCK)]);
    let (url, source) = twin_of(&result);
    assert!(
        source.starts_with(&format!(
            "a second mock process started by loadgen ({MOCK} "
        )),
        "{source}"
    );
    assert_ne!(url, format!("http://{direct}/v1/chat/completions"));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("loadgen: twin: a second mock"));
    assert_stopped(&source);
    // Without the variable, the mock beside loadgen's own executable.
    let dir = scratch("beside");
    place(LOADGEN, &dir.join("loadgen"));
    place(MOCK, &dir.join("mock-upstream"));
    let (_, result) = overhead(&dir.join("loadgen"), direct, &[("PATH", "")]);
    let (_, source) = twin_of(&result);
    let beside = dir.join("mock-upstream");
    assert!(
        source.starts_with(&format!(
            "a second mock process started by loadgen ({} ",
            beside.display()
        )),
        "{source}"
    );
    assert_stopped(&source);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_a_mock_binary_the_twin_is_the_direct_url_and_the_result_says_so() {
    let mock = start_mock(mock_upstream::Config::default());
    let direct = mock.local_addr();
    let same_url = format!("http://{direct}/v1/chat/completions");
    let named = [("GATEBENCH_MOCK_BIN", "/nowhere/mock-upstream")];
    let (output, result) = overhead(Path::new(LOADGEN), direct, &named);
    let (url, source) = twin_of(&result);
    assert_eq!(url, same_url);
    assert!(
        source.starts_with("the direct URL again (same process): "),
        "{source}"
    );
    assert!(
        source.contains("pass --twin URL or put mock-upstream beside loadgen"),
        "{source}"
    );
    assert!(
        source.contains("GATEBENCH_MOCK_BIN names /nowhere/mock-upstream"),
        "{source}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("loadgen: twin: the direct URL again"),
        "{stderr}"
    );
    // loadgen alone in a folder, nothing on PATH.
    let dir = scratch("alone");
    place(LOADGEN, &dir.join("loadgen"));
    let (_, result) = overhead(&dir.join("loadgen"), direct, &[("PATH", "")]);
    let (url, source) = twin_of(&result);
    assert_eq!(url, same_url);
    assert!(
        source.contains("no mock-upstream beside loadgen or on PATH"),
        "{source}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
