//! The C allocator's calls counted by bpftrace: uprobes on the gateway's libc (`malloc`,
//! `calloc`, `realloc`, `free`, with their sizes), attached before a probed run starts and
//! counting only between two marks loadgen makes at the measured window's edges.
//!
//! The marks are `prctl` calls with an option no kernel knows (they fail with EINVAL and change
//! nothing), seen by a tracepoint filtered on loadgen's own pid: the window opens and closes in
//! the kernel the instant loadgen's coordinator crosses its bounds, with no clock shared across
//! processes. Closing ends bpftrace, which prints its maps and detaches every probe; a probe set
//! by bpftrace belongs to its process, so nothing is left on the machine when it exits however it
//! ends (loadgen kills it on every path that does not close a window).

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// `prctl` options marking the window: "GB" and 1 (open) or 2 (close).
const OPEN: libc::c_int = 0x4742_0001;
const CLOSE: libc::c_int = 0x4742_0002;

/// The name loadgen's worker threads start with.
const WORKER: &str = "loadgen-worker";

/// What bpftrace prints once every probe is attached.
const READY: &str = "gatebench-ready";

/// Longest wait for bpftrace to compile and attach its probes (about 2 s here).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest wait for its maps once the window closed.
const PRINT_TIMEOUT: Duration = Duration::from_secs(30);

/// Entries a map may hold: the live allocations of a window and its distinct stacks.
const MAP_KEYS: &str = "65536";

/// What to probe.
#[derive(Debug, Clone)]
pub struct Probe {
    pub program: PathBuf,
    /// The libc the gateway maps (from `/proc/PID/maps`).
    pub libc: PathBuf,
    pub pids: Vec<u32>,
    /// Track each allocation until it is freed, for the bytes still live at the window's end
    /// (return probes: about twice the cost per call).
    pub live: bool,
}

/// A bpftrace attached and waiting for the window to open.
pub struct Attached {
    child: Child,
    output: mpsc::Receiver<String>,
    /// Its marks' second argument: another session in the same process (or another run of
    /// this one) never opens or closes its window.
    token: u64,
}

/// The allocator's entry points that allocate: name, the size in bytes from its arguments, and
/// whether its return value is the block (for the live count; `posix_memalign` writes it
/// through its first argument instead, so its blocks are counted but not followed).
const ALLOCATING: [(&str, &str, bool); 6] = [
    ("malloc", "arg0", true),
    ("calloc", "arg0 * arg1", true),
    ("realloc", "arg1", true),
    ("posix_memalign", "arg2", false),
    ("aligned_alloc", "arg1", true),
    ("memalign", "arg1", true),
];

/// The script for `probe`, counting only in processes `probe.pids`, between loadgen's marks
/// that carry `token`.
pub fn script(probe: &Probe, loadgen_pid: u32, token: u64) -> String {
    let libc = probe.libc.display();
    let who = probe
        .pids
        .iter()
        .map(|p| format!("pid == {p}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let on = format!("@on && ({who})");
    let mark = |option: libc::c_int, then: &str| {
        format!(
            "tracepoint:syscalls:sys_enter_prctl /pid == {loadgen_pid} && args->option == \
             {option} && args->arg2 == {token}/ {{ {then} }}\n"
        )
    };
    let mut s = format!("BEGIN {{ printf(\"{READY}\\n\"); }}\n");
    s.push_str(&mark(OPEN, "@on = 1;"));
    s.push_str(&mark(CLOSE, "@on = 0; exit();"));
    let forget = if probe.live {
        " delete(@live[arg0]); delete(@where[arg0]);"
    } else {
        ""
    };
    for (entry, size, returns) in ALLOCATING {
        let follow = match (probe.live, returns) {
            (true, true) => format!(" @size[tid] = {size};"),
            _ => String::new(),
        };
        let moved = if entry == "realloc" { forget } else { "" };
        s.push_str(&format!(
            "uprobe:{libc}:{entry} /{on}/ {{ @calls[\"{entry}\"] = count(); @bytes = sum({size}); \
             @stacks[comm, ustack(perf)] = sum({size});{moved}{follow} }}\n"
        ));
        if probe.live && returns {
            s.push_str(&format!(
                "uretprobe:{libc}:{entry} /{on} && @size[tid]/ {{ @live[retval] = @size[tid]; \
                 @where[retval] = (comm, ustack(perf)); delete(@size[tid]); }}\n"
            ));
        }
        // loadgen's workers' own calls: the probes sit in every process that maps this libc,
        // so a worker pays a trap for each of its allocations while they are attached.
        s.push_str(&format!(
            "uprobe:{libc}:{entry} /@on && pid == {loadgen_pid} && \
             strncmp(comm, \"{WORKER}\", {len}) == 0/ {{ @own = count(); }}\n",
            len = WORKER.len()
        ));
    }
    s.push_str(&format!(
        "uprobe:{libc}:free /{on} && arg0 != 0/ {{ @calls[\"free\"] = count();{forget} }}\n"
    ));
    if probe.live {
        s.push_str("END { clear(@size); }\n");
    }
    s
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
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || read_until_ready(stdout, tx));
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        text
    });
    match rx.recv_timeout(ATTACH_TIMEOUT) {
        Ok(line) if line == READY => Ok(Attached {
            child,
            output: rx,
            token,
        }),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            let said = errors.join().unwrap_or_default();
            Err(format!(
                "bpftrace did not attach its probes: {}",
                last_error(&said).unwrap_or("it ended without a word")
            ))
        }
    }
}

/// Sends the ready line, then the rest of the output whole once bpftrace ends.
fn read_until_ready(stdout: impl Read, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        if line.trim_end() == READY {
            let _ = tx.send(READY.to_string());
            let mut rest = String::new();
            let _ = reader.read_to_string(&mut rest);
            let _ = tx.send(rest);
            return;
        }
        line.clear();
    }
}

/// The first line of bpftrace's complaint that is an error, not its memlock warning.
fn last_error(said: &str) -> Option<&str> {
    said.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.contains("RLIMIT_MEMLOCK"))
}

fn mark(option: libc::c_int, token: u64) {
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

    /// Marks the window closed and returns what bpftrace printed as it ended.
    pub fn close(mut self) -> Result<String, String> {
        mark(CLOSE, self.token);
        let text = self.output.recv_timeout(PRINT_TIMEOUT);
        let _ = self.child.kill();
        let _ = self.child.wait();
        text.map_err(|_| "bpftrace printed nothing within 30 s of the window's end".to_string())
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

    fn probe(live: bool) -> Probe {
        Probe {
            program: "bpftrace".into(),
            libc: "/lib/x86_64-linux-gnu/libc.so.6".into(),
            pids: vec![10, 11],
            live,
        }
    }

    #[test]
    fn the_script_counts_only_the_gateway_between_the_marks() {
        let s = script(&probe(false), 99, 5);
        assert!(
            s.contains("pid == 99 && args->option == 1195507713 && args->arg2 == 5"),
            "{s}"
        );
        assert!(s.contains("@on && (pid == 10 || pid == 11)"), "{s}");
        for entry in [
            "malloc",
            "calloc",
            "realloc",
            "free",
            "aligned_alloc",
            "memalign",
        ] {
            assert!(s.contains(&format!("libc.so.6:{entry} /")), "{entry}: {s}");
        }
        assert!(
            !s.contains("uretprobe"),
            "no return probes unless live: {s}"
        );
        assert_eq!(script(&probe(true), 99, 5).matches("uretprobe").count(), 5);
        assert!(
            s.contains("libc.so.6:posix_memalign /"),
            "nginx's pools: {s}"
        );
        assert!(s.contains("strncmp(comm, \"loadgen-worker\", 14)"), "{s}");
    }

    #[test]
    fn its_memlock_warning_is_not_the_error() {
        let said = "ERROR: couldn't set RLIMIT_MEMLOCK for bpftrace\nERROR: No probes\n";
        assert_eq!(last_error(said), Some("ERROR: No probes"));
    }
}
