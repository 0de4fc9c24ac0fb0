//! A `mock-upstream` process loadgen starts and owns: started from a configuration file, known
//! ready by the line it prints once listening (its version and address), and killed and waited
//! for when dropped, on every way out of the command (an error, a panic, Ctrl-C's stop).

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running mock that loadgen started; killed and reaped on drop.
#[derive(Debug)]
pub struct MockProcess {
    child: Child,
    config_file: PathBuf,
    pub binary: PathBuf,
    pub version: String,
    pub addr: SocketAddr,
}

impl MockProcess {
    /// Starts `binary` with the configuration `toml` and waits up to `wait` for it to listen.
    pub fn start(binary: &Path, toml: &str, wait: Duration) -> Result<MockProcess, String> {
        let config_file = std::env::temp_dir().join(format!(
            "gatebench-twin-{}-{}.toml",
            std::process::id(),
            unique()
        ));
        std::fs::write(&config_file, toml)
            .map_err(|e| format!("cannot write {}: {e}", config_file.display()))?;
        let mut child = match command(binary, &config_file).spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_file(&config_file);
                return Err(format!("cannot start {}: {e}", binary.display()));
            }
        };
        let ready = child.stderr.take().map(watch);
        let mut process = MockProcess {
            child,
            config_file,
            binary: binary.to_path_buf(),
            version: String::new(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let listening = match ready.map(|r| r.recv_timeout(wait)) {
            Some(Ok(listening)) => listening,
            Some(Err(_)) | None => Err(format!("it did not listen within {wait:?}")),
        };
        // Dropping `process` on an error kills what was started.
        (process.version, process.addr) = listening?;
        // Read by now: nothing is left behind even if loadgen is killed outright.
        let _ = std::fs::remove_file(&process.config_file);
        Ok(process)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config_file);
    }
}

/// The mock's command: its configuration file only, none of this environment's `MOCK_*`
/// settings (they would win over the file), in a process group of its own (a Ctrl-C at the
/// terminal reaches loadgen, which then stops it), and stopped if loadgen dies first.
fn command(binary: &Path, config_file: &Path) -> Command {
    let mut command = Command::new(binary);
    command
        .arg("--config")
        .arg(config_file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("MOCK_") {
            command.env_remove(name);
        }
    }
    use std::os::unix::process::CommandExt as _;
    command.process_group(0);
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    command
}

/// Reads the mock's standard error on a thread of its own, to the end (so the mock never
/// blocks writing it); the channel gets its version and address once it listens, or its last
/// line when it exits first.
fn watch(
    stderr: std::process::ChildStderr,
) -> mpsc::Receiver<Result<(String, SocketAddr), String>> {
    let (send, receive) = mpsc::channel();
    let _ = std::thread::Builder::new()
        .name("loadgen-twin-mock".into())
        .spawn(move || {
            let mut last = String::new();
            let mut told = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !told {
                    if let Some(listening) = listening(&line) {
                        let _ = send.send(Ok(listening));
                        told = true;
                        continue;
                    }
                }
                if !line.trim().is_empty() {
                    last = line;
                }
            }
            if !told {
                let why = if last.is_empty() {
                    "it exited without a word".to_string()
                } else {
                    format!("it exited: {last}")
                };
                let _ = send.send(Err(why));
            }
        });
    receive
}

/// The version and address in the mock's `mock-upstream VERSION listening on http://ADDR (...)`.
pub fn listening(line: &str) -> Option<(String, SocketAddr)> {
    let rest = line.strip_prefix("mock-upstream ")?;
    let (version, rest) = rest.split_once(" listening on ")?;
    let url = rest.split_whitespace().next()?;
    let addr = url.strip_prefix("http://")?.parse().ok()?;
    Some((version.to_string(), addr))
}

/// A number of this process's own, for file names.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_line_gives_version_and_address() {
        let line = "mock-upstream 0.1.0 listening on http://127.0.0.1:40123 (HTTP/1.1 and HTTP/2; \
                    1 threads, open files 1024/4096)";
        let (version, addr) = listening(line).unwrap();
        assert_eq!(version, "0.1.0");
        assert_eq!(addr, "127.0.0.1:40123".parse().unwrap());
        assert!(listening("mock-upstream 0.1.0 listening on https://127.0.0.1:1 (x)").is_none());
        assert!(listening("mock-upstream: shutting down").is_none());
    }

    #[test]
    fn a_binary_that_exits_at_once_is_reported() {
        let err =
            MockProcess::start(Path::new("/bin/false"), "", Duration::from_secs(5)).unwrap_err();
        assert!(err.contains("exited"), "{err}");
        let err = MockProcess::start(
            Path::new("/nowhere/mock-upstream"),
            "",
            Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(err.contains("cannot start /nowhere/mock-upstream"), "{err}");
    }
}
