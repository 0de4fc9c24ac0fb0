//! The `loadgen` binary: exit codes, profiles, outputs.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::process::Command;

fn loadgen() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loadgen"));
    cmd.env_remove("LOADGEN_PROFILE");
    cmd
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("loadgen-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
            &["run", "--profile", "/nonexistent.toml"],
            "cannot read profile",
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
        .args(["run", "--profile"])
        .arg(&profile)
        .args(["--rate", "300", "--out"])
        .arg(&out_json)
        .arg("--hgrm")
        .arg(&hgrm)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.code() == Some(0) || stdout.contains("invalid: schedule lag"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("scenario chat-stream"), "{stdout}");
    assert!(stdout.contains("ttft"), "{stdout}");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
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
