//! Running `perf`: checking that it may sample the gateway (and saying which setting stands in
//! the way when it may not), recording on-CPU samples and the scheduler's switches during a
//! window, and turning a recording into text (`perf script`).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::options::CallGraph;

/// How long a stopped `perf record` may take to write its file before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(20);

/// `perf record` of switches off a CPU (with stacks) and back onto one, for `-p PIDS`.
const OFF_CPU_RECORD: [&str; 7] = [
    "record",
    "-q",
    "-e",
    "sched:sched_switch",
    "-g",
    "--switch-events",
    "-p",
];

/// A `perf` that ran and may sample the gateway.
#[derive(Debug, Clone)]
pub struct Perf {
    program: PathBuf,
    /// What `perf --version` printed, like `perf version 6.1.187`.
    pub version: String,
}

/// A `perf record` running in the background until [`Recording::stop`].
#[derive(Debug)]
pub struct Recording {
    child: Child,
    pub path: PathBuf,
    started: Instant,
}

impl Perf {
    /// Checks that `program` runs and may sample `pid` with `call_graph` stacks (a 50 ms
    /// recording); when it cannot, the reason in the user's terms, naming the setting.
    pub fn check(
        program: &Path,
        pid: u32,
        call_graph: CallGraph,
        dir: &Path,
    ) -> Result<Perf, String> {
        let version = match Command::new(program).arg("--version").output() {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            }
            Ok(out) => return Err(failure(program, "--version", &out.stderr)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "{} was not found: install perf (Debian: apt-get install linux-perf; Ubuntu: \
                     linux-tools-$(uname -r)) or name it with --perf PATH",
                    program.display()
                ))
            }
            Err(err) => return Err(format!("{} cannot run: {err}", program.display())),
        };
        let perf = Perf {
            program: program.to_path_buf(),
            version,
        };
        let probe = dir.join("probe.data");
        let out = perf
            .command()
            .args([
                "record",
                "-q",
                "-F",
                "99",
                "--call-graph",
                call_graph.name(),
                "-p",
            ])
            .arg(pid.to_string())
            .arg("-o")
            .arg(&probe)
            .args(["--", "sleep", "0.05"])
            .output()
            .map_err(|e| format!("{} cannot run: {e}", program.display()))?;
        let _ = std::fs::remove_file(&probe);
        if out.status.success() {
            Ok(perf)
        } else {
            Err(refusal(&perf, "sample the gateway", pid, &out.stderr))
        }
    }

    /// Checks that the gateway's switches off and onto a CPU may be recorded (a 50 ms
    /// recording).
    pub fn check_off_cpu(&self, pid: u32, dir: &Path) -> Result<(), String> {
        let probe = dir.join("probe-off.data");
        let out = self
            .command()
            .args(OFF_CPU_RECORD)
            .arg(pid.to_string())
            .arg("-o")
            .arg(&probe)
            .args(["--", "sleep", "0.05"])
            .output()
            .map_err(|e| format!("{} cannot run: {e}", self.program.display()))?;
        let _ = std::fs::remove_file(&probe);
        if out.status.success() {
            Ok(())
        } else {
            Err(refusal(
                self,
                "record the scheduler's switches (off-CPU)",
                pid,
                &out.stderr,
            ))
        }
    }

    /// Starts sampling the stacks of `pids` (with their threads) `frequency` times a second.
    pub fn start_on_cpu(
        &self,
        pids: &[u32],
        frequency: u32,
        call_graph: CallGraph,
        path: PathBuf,
    ) -> Result<Recording, String> {
        let mut command = self.command();
        command
            .args(["record", "-q", "-F", &frequency.to_string()])
            .args(["--call-graph", call_graph.name(), "-p", &list(pids), "-o"])
            .arg(&path);
        self.spawn(command, path)
    }

    /// Starts recording every switch of `pids`' threads off a CPU, with the stack each left
    /// from (walked by frame pointers: a copy of the stack at every switch would weigh more
    /// than the gateway's own work), and back onto one.
    pub fn start_off_cpu(&self, pids: &[u32], path: PathBuf) -> Result<Recording, String> {
        let mut command = self.command();
        command
            .args(OFF_CPU_RECORD)
            .arg(list(pids))
            .arg("-o")
            .arg(&path);
        self.spawn(command, path)
    }

    /// `perf script -F fields` of the recording at `data` (with the switch events when
    /// `switches`).
    pub fn script(&self, data: &Path, fields: &str, switches: bool) -> Result<Vec<u8>, String> {
        let mut command = self.command();
        command
            .arg("script")
            .arg("-i")
            .arg(data)
            .args(["-F", fields]);
        if switches {
            command.arg("--show-switch-events");
        }
        let out = command
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{} script cannot run: {e}", self.program.display()))?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(failure(&self.program, "script", &out.stderr))
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.stdin(Stdio::null());
        command
    }

    fn spawn(&self, mut command: Command, path: PathBuf) -> Result<Recording, String> {
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{} cannot run: {e}", self.program.display()))?;
        Ok(Recording {
            child,
            path,
            started: Instant::now(),
        })
    }
}

impl Recording {
    /// Stops the recording (SIGINT, as Ctrl-C would) and waits for perf to write it; how long
    /// it recorded.
    pub fn stop(mut self) -> Result<(PathBuf, Duration), String> {
        let recorded = self.started.elapsed();
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) with a process id we started and have not yet waited for.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
        let deadline = Instant::now() + STOP_GRACE;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
            }
        };
        let mut stderr = Vec::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_end(&mut stderr);
        }
        match status {
            // perf exits with the signal's status when stopped by SIGINT, after writing.
            Some(_) if self.path.exists() => Ok((self.path, recorded)),
            Some(_) => Err(failure(Path::new("perf"), "record", &stderr)),
            None => Err(format!(
                "perf record did not finish writing within {} s of being stopped",
                STOP_GRACE.as_secs()
            )),
        }
    }
}

/// `perf` refused to `what`: the reason, naming the setting that stands in the way.
fn refusal(perf: &Perf, what: &str, pid: u32, stderr: &[u8]) -> String {
    let said = first_lines(stderr);
    let lower = said.to_lowercase();
    if lower.contains("no such process") || !Path::new(&format!("/proc/{pid}")).exists() {
        return format!(
            "process {pid} is not running ({} said: {said})",
            perf.program.display()
        );
    }
    let denied = [
        "paranoid",
        "permission",
        "not permitted",
        "access to performance",
    ];
    if denied.iter().any(|d| lower.contains(d)) {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unreadable".into());
        return format!(
            "perf may not {what}: kernel.perf_event_paranoid is {paranoid} (another user's \
             process needs 1 or lower, kernel stacks and the scheduler's switches -1, or run as \
             root or with CAP_PERFMON: sysctl -w kernel.perf_event_paranoid=-1). In a container, \
             perf_event_open must also be allowed (--cap-add PERFMON, or a seccomp profile that \
             permits it). perf said: {said}"
        );
    }
    format!("perf cannot {what}: {said}")
}

fn failure(program: &Path, what: &str, stderr: &[u8]) -> String {
    format!(
        "{} {what} failed: {}",
        program.display(),
        first_lines(stderr)
    )
}

/// The first few non-empty lines of what a command printed, on one line.
fn first_lines(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("WARNING: perf not found for kernel"))
        .take(4)
        .collect();
    if lines.is_empty() {
        "(nothing)".into()
    } else {
        lines.join(" ")
    }
}

fn list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_perf_is_named_with_how_to_install_it() {
        let dir = std::env::temp_dir();
        let err = Perf::check(
            Path::new("/nonexistent/perf"),
            std::process::id(),
            CallGraph::Fp,
            &dir,
        )
        .unwrap_err();
        assert!(
            err.contains("was not found") && err.contains("linux-perf"),
            "{err}"
        );
    }

    #[test]
    fn a_refusal_names_perf_event_paranoid() {
        let perf = Perf {
            program: PathBuf::from("perf"),
            version: String::new(),
        };
        let said = b"Error:\nAccess to performance monitoring and observability operations is \
                     limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid setting";
        let text = refusal(&perf, "sample the gateway", std::process::id(), said);
        assert!(text.contains("kernel.perf_event_paranoid is"), "{text}");
        assert!(
            text.contains("CAP_PERFMON") && text.contains("container"),
            "{text}"
        );
        let gone = refusal(&perf, "sample the gateway", u32::MAX, b"");
        assert!(gone.contains("is not running"), "{gone}");
    }
}
