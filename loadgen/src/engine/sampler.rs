//! Resource use of the system under test (`--sample-pid NAME=PID`, or `NAME=cgroup:PATH`): CPU in
//! cores and resident memory every 250 ms, reported as *idle* (a second before any load) and
//! *under load* (mean and peak), each labelled as such, never one number called "memory".
//!
//! A PID is sampled with its descendants (a gateway's workers); a cgroup (v2) by its
//! `cpu.stat` and `memory.current`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::run::SetupError;
use crate::generator::plan_error::PlanError;

/// Time between samples.
pub const INTERVAL: Duration = Duration::from_millis(250);
/// How long the idle baseline is sampled before the load starts.
pub const IDLE: Duration = Duration::from_secs(1);

/// What to sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Pid(u32),
    Cgroup(PathBuf),
}

/// A named source, from `NAME=PID` or `NAME=cgroup:PATH`.
#[derive(Debug, Clone)]
pub struct SampleSpec {
    pub name: String,
    pub source: Source,
}

impl SampleSpec {
    pub fn parse(text: &str) -> Result<SampleSpec, PlanError> {
        let err = || {
            PlanError::Named(
                "--sample-pid",
                text.to_string(),
                "NAME=PID or NAME=cgroup:PATH",
            )
        };
        let (name, what) = text.split_once('=').ok_or_else(err)?;
        let source = match what.strip_prefix("cgroup:") {
            Some(path) => {
                let path = PathBuf::from(path);
                if !path.join("cpu.stat").exists() {
                    return Err(PlanError::Named(
                        "--sample-pid",
                        text.to_string(),
                        "a cgroup v2 directory with cpu.stat",
                    ));
                }
                Source::Cgroup(path)
            }
            None => {
                let pid: u32 = what.trim().parse().map_err(|_| err())?;
                if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                    return Err(PlanError::Named(
                        "--sample-pid",
                        text.to_string(),
                        "a running process",
                    ));
                }
                Source::Pid(pid)
            }
        };
        if name.trim().is_empty() {
            return Err(err());
        }
        Ok(SampleSpec {
            name: name.trim().to_string(),
            source,
        })
    }
}

use crate::results::resources::{ResourceReport, Sample};

/// Samplers running in a background thread until [`Sampling::finish`].
#[derive(Debug)]
pub struct Sampling {
    specs: Vec<SampleSpec>,
    samples: Arc<Mutex<Vec<Vec<Sample>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    started: Instant,
    load_started_s: f64,
}

impl Sampling {
    /// Starts sampling and waits out the idle second (at once when there is nothing to sample).
    pub fn start(specs: Vec<SampleSpec>) -> Sampling {
        let samples = Arc::new(Mutex::new(vec![Vec::new(); specs.len()]));
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let thread = (!specs.is_empty()).then(|| {
            let (specs, samples, stop) = (specs.clone(), samples.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Relaxed) {
                    sample_all(&specs, &samples, started);
                    std::thread::sleep(INTERVAL);
                }
            })
        });
        if thread.is_some() {
            std::thread::sleep(IDLE + INTERVAL / 2);
        }
        Sampling {
            load_started_s: started.elapsed().as_secs_f64(),
            specs,
            samples,
            stop,
            thread,
            started,
        }
    }

    /// Stops sampling and reports each source.
    pub fn finish(mut self) -> Vec<ResourceReport> {
        self.stop.store(true, Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
            // A last sample, so a load shorter than one interval is still seen.
            sample_all(&self.specs, &self.samples, self.started);
        }
        let all = self.samples.lock().map(|s| s.clone()).unwrap_or_default();
        self.specs
            .iter()
            .zip(all)
            .map(|(spec, samples)| report(spec, samples, self.load_started_s))
            .collect()
    }
}

/// Reads every source once and appends the readings.
fn sample_all(specs: &[SampleSpec], samples: &Mutex<Vec<Vec<Sample>>>, started: Instant) {
    let t_s = started.elapsed().as_secs_f64();
    let readings: Vec<Option<(f64, u64)>> = specs.iter().map(|s| read(&s.source)).collect();
    if let Ok(mut all) = samples.lock() {
        for (list, reading) in all.iter_mut().zip(readings) {
            if let Some((cpu_s, rss_bytes)) = reading {
                list.push(Sample {
                    t_s,
                    cpu_s,
                    rss_bytes,
                });
            }
        }
    }
}

fn report(spec: &SampleSpec, samples: Vec<Sample>, load_started_s: f64) -> ResourceReport {
    let (idle, load): (Vec<&Sample>, Vec<&Sample>) =
        samples.iter().partition(|s| s.t_s < load_started_s);
    let rate = |a: &Sample, b: &Sample| {
        let dt = b.t_s - a.t_s;
        if dt > 0.0 {
            (b.cpu_s - a.cpu_s).max(0.0) / dt
        } else {
            0.0
        }
    };
    let span = |s: &[&Sample]| match (s.first(), s.last()) {
        (Some(a), Some(b)) => rate(a, b),
        _ => 0.0,
    };
    // The load's span starts at the last idle sample, so its first interval counts.
    let mut load_span: Vec<&Sample> = idle.last().copied().into_iter().collect();
    load_span.extend(load.iter().copied());
    ResourceReport {
        name: spec.name.clone(),
        source: match &spec.source {
            Source::Pid(pid) => format!("pid {pid} and descendants"),
            Source::Cgroup(path) => format!("cgroup {}", path.display()),
        },
        idle_cpu_cores: span(&idle),
        idle_rss_bytes: idle.last().map_or(0, |s| s.rss_bytes),
        load_cpu_cores_mean: span(&load_span),
        load_cpu_cores_peak: load_span
            .windows(2)
            .map(|w| rate(w[0], w[1]))
            .fold(0.0, f64::max),
        load_rss_peak_bytes: load.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        load_started_s,
        samples,
    }
}

/// CPU seconds and resident bytes of a source now; `None` when it is gone.
pub(crate) fn read(source: &Source) -> Option<(f64, u64)> {
    match source {
        Source::Pid(pid) => {
            let mut total = (0.0, 0);
            for p in with_descendants(*pid) {
                if let Some((cpu, rss)) = read_pid(p) {
                    total.0 += cpu;
                    total.1 += rss;
                }
            }
            read_pid(*pid).map(|_| total)
        }
        Source::Cgroup(path) => {
            let stat = std::fs::read_to_string(path.join("cpu.stat")).ok()?;
            let usec: f64 = stat
                .lines()
                .find_map(|l| l.strip_prefix("usage_usec "))?
                .trim()
                .parse()
                .ok()?;
            let memory = std::fs::read_to_string(path.join("memory.current"))
                .ok()
                .and_then(|m| m.trim().parse().ok())
                .unwrap_or(0);
            Some((usec / 1e6, memory))
        }
    }
}

/// `pid` and every process below it.
pub(crate) fn with_descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(ppid) = stat_fields(p).and_then(|f| f.get(1).and_then(|v| v.parse().ok())) {
                parents.push((p, ppid));
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    tree
}

/// The fields of `/proc/PID/stat` after the command name: state, ppid, … (index 0 is state).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// CPU seconds (user + system) and resident bytes of one process.
fn read_pid(pid: u32) -> Option<(f64, u64)> {
    let fields = stat_fields(pid)?;
    // After the name: state(0) ppid(1) … utime(11) stime(12) … rss pages(21).
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    let rss_pages: u64 = fields.get(21)?.parse().ok()?;
    // SAFETY: sysconf reads system settings and has no preconditions.
    let (hz, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    Some((ticks / hz.max(1) as f64, rss_pages * page.max(1) as u64))
}

/// The parsed `--sample-pid` options.
pub(crate) fn sample_specs(texts: &[String]) -> Result<Vec<SampleSpec>, SetupError> {
    texts
        .iter()
        .map(|s| SampleSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(SetupError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_refuse_what_cannot_be_sampled() {
        let me = std::process::id();
        let spec = SampleSpec::parse(&format!("self={me}")).unwrap();
        assert_eq!(spec.source, Source::Pid(me));
        assert!(SampleSpec::parse("x").is_err());
        assert!(SampleSpec::parse("x=notapid").is_err());
        assert!(SampleSpec::parse("x=cgroup:/nonexistent").is_err());
    }

    /// This thread's CPU time, ns.
    fn thread_cpu_ns() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock exists on Linux.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// What a sampled child does: waits for a line on stdin, touches 64 MiB and keeps one
    /// thread busy for 600 ms of its CPU time, says `busy-done`, and holds all of it until stdin
    /// closes. Run only by [`a_process_is_sampled_busy_and_resident`], as a process of its own,
    /// so the memory other tests of this binary take and give back is not in its readings.
    #[test]
    #[ignore = "a child of a_process_is_sampled_busy_and_resident"]
    fn busy_and_resident_child() {
        use std::io::{BufRead, Write};
        let mut line = String::new();
        let mut stdin = std::io::stdin().lock();
        stdin.read_line(&mut line).unwrap();
        let mut block = vec![0u8; 64 << 20];
        for i in (0..block.len()).step_by(4096) {
            block[i] = 1;
        }
        // 600 ms of this thread's own CPU time, however long a busy host makes that take.
        let mut x = 0u64;
        while thread_cpu_ns() < 600_000_000 {
            for _ in 0..10_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
        }
        println!("busy-done");
        std::io::stdout().flush().unwrap();
        while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {}
        std::hint::black_box((x, &block));
    }

    #[test]
    fn a_process_is_sampled_busy_and_resident() {
        use std::io::{BufRead, BufReader, Write};
        use std::process::{Command, Stdio};
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "engine::sampler::tests::busy_and_resident_child"])
            .args(["--ignored", "--nocapture", "--test-threads=1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let spec = SampleSpec::parse(&format!("child={}", child.id())).unwrap();
        let sampling = Sampling::start(vec![spec]);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"go\n").unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map_while(Result::ok);
        // The child's harness prints the test's name first, on the same line.
        let said = lines.any(|l| l.ends_with("busy-done"));
        let reports = sampling.finish();
        drop(stdin);
        // The rest of what the harness prints is read, so it never writes to a closed pipe.
        lines.for_each(drop);
        let status = child.wait().unwrap();
        assert!(said && status.success(), "the child: {status}");
        let r = &reports[0];
        assert!(r.samples.len() >= 6, "{}", r.samples.len());
        // The child's 600 ms of CPU is all in the readings (the last is taken at the finish);
        // how many cores that was at its peak is the host's share, judged in a precision run.
        let used = |s: &Sample| s.cpu_s;
        let spent = r.samples.iter().map(used).fold(0.0, f64::max)
            - r.samples.iter().map(used).fold(f64::MAX, f64::min);
        assert!(spent >= 0.55, "{spent} s of CPU: {r:?}");
        if std::env::var_os("GATEBENCH_PRECISION").is_some_and(|v| v != "0") {
            assert!(r.load_cpu_cores_peak > 0.25, "{r:?}");
        }
        assert!(
            r.load_rss_peak_bytes >= r.idle_rss_bytes + (60 << 20),
            "{r:?}"
        );
    }
}
