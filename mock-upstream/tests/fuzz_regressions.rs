//! Replays the fuzz targets' seeds (`fuzz/corpus/`) and every input that once crashed one
//! (`fuzz/regressions/`): request bytes sent to the binary, which must answer the next client
//! and never print a panic; settings files, which must validate or be refused.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use common::{mock, start};

use mock_upstream::RawSettings;

/// Every input kept for `target`, seeds and regressions.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut found = Vec::new();
    for folder in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            found.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    assert!(!found.is_empty(), "the seeds of {target} are missing");
    found
}

#[test]
fn settings_inputs_validate_or_are_refused_without_panicking() {
    for (path, bytes) in inputs("mock_settings") {
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let outcome = std::panic::catch_unwind(|| {
            if let Ok(settings) = toml::from_str::<RawSettings>(&text) {
                if let Ok(config) = settings.validate() {
                    let printed = config.to_toml();
                    toml::from_str::<RawSettings>(&printed)
                        .unwrap()
                        .validate()
                        .unwrap();
                }
            }
        });
        assert!(outcome.is_ok(), "{} panics", path.display());
    }
}

#[test]
fn request_inputs_leave_the_mock_serving_and_panic_free() {
    let mut server = start(mock().args([
        "--listen",
        "127.0.0.1:0",
        "--threads",
        "1",
        "--header-timeout",
        "200ms",
        "--body-timeout",
        "200ms",
        "--tool-calls",
        "50%",
    ]));
    let addr = server.addr.clone();
    for (path, bytes) in inputs("mock_request") {
        let mut tcp = TcpStream::connect(&addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = tcp.write_all(&bytes);
        let _ = tcp.shutdown(Shutdown::Write);
        let mut answer = Vec::new();
        let _ = tcp.read_to_end(&mut answer);
        let mut probe =
            TcpStream::connect(&addr).unwrap_or_else(|e| panic!("after {}: {e}", path.display()));
        probe
            .write_all(b"GET /health HTTP/1.1\r\nhost: m\r\nconnection: close\r\n\r\n")
            .unwrap();
        let mut health = String::new();
        probe.read_to_string(&mut health).unwrap();
        assert!(
            health.starts_with("HTTP/1.1 200"),
            "after {}",
            path.display()
        );
    }
    assert!(server.terminate().success());
    let mut printed = String::new();
    server.stderr.read_to_string(&mut printed).unwrap();
    assert!(!printed.contains("panicked"), "{printed}");
}
