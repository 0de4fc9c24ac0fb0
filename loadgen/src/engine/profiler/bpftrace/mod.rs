//! bpftrace run for a probed window: started before the run and asked until its probes answer
//! (the program, `script`, counts the C allocator's calls between two marks loadgen makes at
//! the measured window's edges), then ended at the window's close, with what it printed and
//! what it complained of.
//!
//! The marks are `prctl` calls with an option no kernel knows (they fail with EINVAL and change
//! nothing), seen by a tracepoint filtered on loadgen's own pid: the window opens and closes in
//! the kernel the instant loadgen's coordinator crosses its bounds, with no clock shared across
//! processes. Closing ends bpftrace, which prints its maps and detaches every probe; a probe set
//! by bpftrace belongs to its process, so nothing is left on the machine when it exits however it
//! ends (loadgen kills it on every path that does not close a window).
//!
//! - `script`: the bpftrace program, each allocator call counted once.
//! - `maps`: what bpftrace printed, read back into counts and stacks.

pub mod maps;
mod script;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub use script::Probe;
use script::{script, CLOSE, CLOSED, OPEN, OPENED, PING, READY};

/// Longest wait for bpftrace to compile and attach its probes (about 2 s here).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest wait for its maps once the window closed.
const PRINT_TIMEOUT: Duration = Duration::from_secs(30);

/// Entries a map may hold: the live allocations of a window and its distinct stacks.
const MAP_KEYS: &str = "65536";

/// A bpftrace attached and waiting for the window to open.
pub struct Attached {
    child: Child,
    output: mpsc::Receiver<String>,
    /// Its marks' second argument: another session in the same process (or another run of
    /// this one) never opens or closes its window.
    token: u64,
    /// What it says on its standard error, whole once it ends.
    errors: Option<std::thread::JoinHandle<String>>,
}

/// What bpftrace printed for a window, and what it complained of.
pub struct Printed {
    pub text: String,
    /// Its warnings (a map full, events lost), each a problem of the window.
    pub warnings: Vec<String>,
}

/// Starts bpftrace on `probe` and waits until its probes are attached.
pub fn attach(probe: &Probe) -> Result<Attached, String> {
    static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let token = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let script = script(probe, std::process::id(), token);
    let mut command = Command::new(&probe.program);
    // SAFETY: the closure runs in the child before exec and only makes one async-signal-safe
    // call: bpftrace dies with loadgen, even when loadgen is killed, so no probe outlives it.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = command
        .arg("-e")
        .arg(&script)
        .env("BPFTRACE_MAP_KEYS_MAX", MAP_KEYS)
        .env("BPFTRACE_STRLEN", "64")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", probe.program.display()))?;
    // Invariant: both were piped just above.
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || read_until_ready(stdout, tx));
    let errors = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = BufReader::new(stderr).read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    if wait_ready(&rx, token, &mut child) {
        return Ok(Attached {
            child,
            output: rx,
            token,
            errors: Some(errors),
        });
    }
    let _ = child.kill();
    let _ = child.wait();
    let said = errors.join().unwrap_or_default();
    Err(format!(
        "bpftrace did not attach its probes: {}",
        last_error(&said).unwrap_or("it ended without a word")
    ))
}

/// Pings until the program's last probe answers (every probe before it is then attached), it
/// ends, or [`ATTACH_TIMEOUT`] passes.
fn wait_ready(rx: &mpsc::Receiver<String>, token: u64, child: &mut Child) -> bool {
    let until = std::time::Instant::now() + ATTACH_TIMEOUT;
    while std::time::Instant::now() < until {
        mark(PING, token);
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) if line == READY => return true,
            Ok(_) | Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
    }
    false
}

/// Sends the ready line, then the rest of the output whole once bpftrace ends.
fn read_until_ready(stdout: impl Read, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        if line.trim_end() == READY {
            let _ = tx.send(READY.to_string());
            let mut rest = Vec::new();
            let _ = reader.read_to_end(&mut rest);
            let _ = tx.send(String::from_utf8_lossy(&rest).into_owned());
            return;
        }
        line.clear();
    }
}

/// The first line of bpftrace's complaint that is an error, not its memlock warning.
fn last_error(said: &str) -> Option<&str> {
    let lines = || {
        said.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains("RLIMIT_MEMLOCK"))
    };
    // A compile error is a line starting `stdin:` or holding `ERROR`, then the source and a
    // line of carets under it.
    lines()
        .rfind(|l| l.contains("ERROR") || l.contains("rror:"))
        .or_else(|| lines().rfind(|l| !l.chars().all(|c| c == '~' || c == '^')))
}

fn mark(option: i32, token: u64) {
    // SAFETY: prctl with an unknown option reads no pointer and fails with EINVAL.
    unsafe {
        libc::prctl(option, token as libc::c_ulong, 0, 0, 0);
    }
}

impl Attached {
    /// Marks the window open: the probes count from now.
    pub fn open_window(&self) {
        mark(OPEN, self.token);
    }

    /// Marks the window closed and returns what bpftrace printed as it ended; an error when it
    /// printed nothing, or never saw the window open or close (its counts would be zeros).
    pub fn close(mut self) -> Result<Printed, String> {
        mark(CLOSE, self.token);
        let text = self.output.recv_timeout(PRINT_TIMEOUT);
        let _ = self.child.kill();
        let _ = self.child.wait();
        let said = self
            .errors
            .take()
            .and_then(|e| e.join().ok())
            .unwrap_or_default();
        let text = text
            .map_err(|_| "bpftrace printed nothing within 30 s of the window's end".to_string())?;
        if !text.contains(OPENED) || !text.contains(CLOSED) {
            return Err(format!(
                "bpftrace never saw the window {} (loadgen's marks did not reach it), so nothing \
                 was counted{}",
                if text.contains(OPENED) {
                    "close"
                } else {
                    "open"
                },
                last_error(&said).map_or(String::new(), |e| format!("; it said: {e}"))
            ));
        }
        Ok(Printed {
            text,
            warnings: warnings(&said),
        })
    }

    /// Ends bpftrace without a window (an error or a stop before it opened).
    pub fn abandon(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// bpftrace's warnings: what it said beyond attaching and its memlock complaint.
fn warnings(said: &str) -> Vec<String> {
    said.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("RLIMIT_MEMLOCK") && !l.starts_with("Attaching"))
        .map(|l| format!("bpftrace said: {l}"))
        .collect()
}

/// Whether bpftrace may attach probes here: a program that only begins and ends, run once.
pub fn may_attach(program: &Path) -> Result<(), String> {
    let out = Command::new(program)
        .args(["-e", "BEGIN { exit(); }"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "bpftrace may not attach probes here: {}",
        last_error(&said).unwrap_or("it failed without a word")
    ))
}

/// The libc mapped by process `pid`, from its memory map.
pub fn libc_of(pid: u32) -> Option<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|path| {
            let name = Path::new(path)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            name.starts_with("libc.so") || name.starts_with("libc-")
        })
        .map(PathBuf::from)
}

/// What `bpftrace --version` prints, or why it cannot run.
pub fn version(program: &Path) -> Result<String, String> {
    let out = Command::new(program)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !text.is_empty() {
        Ok(text)
    } else {
        Err(format!("{} --version failed", program.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_memlock_warning_is_not_the_error() {
        let said = "ERROR: couldn't set RLIMIT_MEMLOCK for bpftrace\nERROR: No probes\n";
        assert_eq!(last_error(said), Some("ERROR: No probes"));
        let said = "stdin:1:1-5: ERROR: Undefined map: @size\nEND { clear(@size); }\n~~~~~\n";
        assert_eq!(
            last_error(said),
            Some("stdin:1:1-5: ERROR: Undefined map: @size")
        );
        let said = "Attaching 30 probes...\nWARNING: map full\n";
        assert_eq!(warnings(said), ["bpftrace said: WARNING: map full"]);
    }

    #[test]
    fn this_process_maps_a_libc() {
        assert!(libc_of(std::process::id()).is_some());
    }
}
