//! The `mock-upstream` binary: configuration layering, `--print-config`, usage errors.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use common::{mock, start, terminate, Running};

fn printed(cmd: &mut Command) -> toml::Table {
    let out = cmd.arg("--print-config").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    toml::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap()
}

#[test]
fn defaults_then_file_then_environment_then_flags() {
    let dir = std::env::temp_dir().join(format!("mock-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mock.toml");
    std::fs::write(
        &file,
        "ttft = \"200ms\"\nitl = \"5ms\"\ntokens = 60\nseed = 9\nlisten = \"127.0.0.1:9100\"\n",
    )
    .unwrap();

    let defaults = printed(&mut mock());
    assert_eq!(defaults["listen"].as_str(), Some("127.0.0.1:8080"));
    assert_eq!(defaults["ttft"].as_str(), Some("0"));
    assert_eq!(defaults["tokens"].as_str(), Some("16"));
    assert_eq!(defaults["max-body"].as_str(), Some("16777216"));
    assert_eq!(defaults["spin"].as_str(), Some("auto"));
    let spin_env = printed(mock().env("MOCK_SPIN", "0"));
    assert_eq!(spin_env["spin"].as_str(), Some("0"));
    let spin_flag = printed(mock().env("MOCK_SPIN", "0").args(["--spin", "50us"]));
    assert_eq!(spin_flag["spin"].as_str(), Some("50us"));

    let from_file = printed(mock().arg("--config").arg(&file));
    assert_eq!(from_file["ttft"].as_str(), Some("200ms"));
    assert_eq!(from_file["tokens"].as_str(), Some("60"));

    let env_over_file = printed(
        mock()
            .env("MOCK_CONFIG", &file)
            .env("MOCK_TTFT", "uniform:10ms..20ms")
            .env("MOCK_LISTEN", "0.0.0.0:9200"),
    );
    assert_eq!(env_over_file["ttft"].as_str(), Some("uniform:10ms..20ms"));
    assert_eq!(env_over_file["listen"].as_str(), Some("0.0.0.0:9200"));
    assert_eq!(env_over_file["itl"].as_str(), Some("5ms"));

    let flag_over_env = printed(
        mock()
            .env("MOCK_CONFIG", &file)
            .env("MOCK_TTFT", "uniform:10ms..20ms")
            .args(["--ttft", "lognormal:50ms,0.5", "--seed", "3"]),
    );
    assert_eq!(flag_over_env["ttft"].as_str(), Some("lognormal:50ms,0.5"));
    assert_eq!(flag_over_env["seed"].as_integer(), Some(3));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_settings_exit_2_with_the_expected_format() {
    let cases: [&[&str]; 4] = [
        &["--itl", "fast"],
        &["--listen", "nowhere"],
        &["--tokens", "0"],
        &["--config", "/nonexistent/mock.toml"],
    ];
    for args in cases {
        let out = mock().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("expected") || err.contains("cannot read"),
            "{args:?}: {err}"
        );
    }
    let out = mock().arg("--no-such-flag").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn serves_until_sigterm_then_exits_cleanly() {
    let mut mock = start(mock().args(["--listen", "127.0.0.1:0", "--threads", "1"]));

    let mut tcp = TcpStream::connect(&mock.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    tcp.write_all(b"GET /health HTTP/1.1\r\nhost: m\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");

    let status = mock.terminate();
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    mock.stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("emission error"), "{rest}");
    // The default timer's facts: its setting, margin, wake-ups (the calibration's at least).
    assert!(rest.contains("timer spin auto: margin "), "{rest}");
    assert!(rest.contains(" wake-ups p50 "), "{rest}");
}

#[test]
fn a_sigterm_as_soon_as_it_listens_is_a_clean_shutdown() {
    // The signals must be watched before the port opens; sent at once, a few times over, the
    // signal found them watched every time.
    for _ in 0..5 {
        let mut mock = start(mock().args(["--listen", "127.0.0.1:0", "--threads", "1"]));
        assert!(mock.line.contains("listening on"), "{}", mock.line);
        let status = mock.terminate();
        assert!(status.success(), "{status}");
    }
}

/// Starts the binary with `env` (MOCK_* settings) and returns it once it listens, with its
/// port.
fn serve_with(env: &[(&str, &str)]) -> (std::process::Child, u16) {
    let mock = start(mock().envs(env.iter().copied()));
    let port = mock.port();
    let Running {
        child, mut stderr, ..
    } = mock;
    // Keep reading: a closed pipe would make the server's next message fail.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, port)
}

fn healthcheck(env: &[(&str, &str)]) -> std::process::Output {
    mock()
        .envs(env.iter().copied())
        .args(["healthcheck", "--timeout", "3s"])
        .output()
        .unwrap()
}

#[test]
fn healthcheck_finds_the_server_from_the_same_settings() {
    // A fixed port: the check must find the server from MOCK_LISTEN alone, as in a container.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let listen = format!("0.0.0.0:{port}");
    let env = [("MOCK_LISTEN", listen.as_str()), ("MOCK_THREADS", "1")];
    let (mut child, served) = serve_with(&env);
    assert_eq!(served, port);
    let out = healthcheck(&env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "healthy");
    child.kill().unwrap();
    child.wait().unwrap();
    // Nothing there any more: unhealthy, exit 1 with the reason.
    let out = healthcheck(&env);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot connect"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn healthcheck_speaks_tls_trusting_the_mocks_ca() {
    let dir = std::env::temp_dir().join(format!("mock-health-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let listen = format!("127.0.0.1:{port}");
    let ca_text = ca.display().to_string();
    let env = [
        ("MOCK_LISTEN", listen.as_str()),
        ("MOCK_THREADS", "1"),
        ("MOCK_TLS_NAMES", "localhost,127.0.0.1"),
        ("MOCK_TLS_CA_FILE", ca_text.as_str()),
    ];
    let (mut child, _) = serve_with(&env);
    let out = healthcheck(&env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A plain-HTTP check against the TLS port is not healthy.
    let plain = healthcheck(&env[..2]);
    assert_eq!(plain.status.code(), Some(1));
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_closed_stderr_pipe_does_not_turn_a_clean_shutdown_into_a_crash() {
    let Running {
        mut child, stderr, ..
    } = start(mock().args(["--listen", "127.0.0.1:0", "--threads", "1"]));
    // The reader goes away: the shutdown messages meet a broken pipe.
    drop(stderr);
    let status = terminate(&mut child);
    assert!(status.success(), "{status}");
}
