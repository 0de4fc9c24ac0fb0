//! What the binary's tests share: starting it clear of the caller's MOCK_* settings, reading
//! the address from its "listening on" line, stopping it with SIGTERM.

#![allow(dead_code)] // each test file uses part of it

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};

/// The binary, without the MOCK_* settings of the tests' own environment.
pub fn mock() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mock-upstream"));
    for (key, _) in std::env::vars() {
        if key.starts_with("MOCK_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// A started binary: its stderr after the first line, and the HOST:PORT that line names.
pub struct Running {
    pub child: Child,
    pub stderr: BufReader<ChildStderr>,
    pub addr: String,
    /// The first line it printed.
    pub line: String,
}

/// Starts `cmd` with stderr piped and waits for its first line ("... listening on
/// http://HOST:PORT ...").
pub fn start(cmd: &mut Command) -> Running {
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Running {
        child,
        stderr,
        addr,
        line,
    }
}

impl Running {
    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        terminate(&mut self.child)
    }
}

/// Sends SIGTERM to `child` and waits for its exit.
pub fn terminate(child: &mut Child) -> ExitStatus {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait().unwrap()
}
