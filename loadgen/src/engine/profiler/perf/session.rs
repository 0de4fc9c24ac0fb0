//! One profiling session: perf started when a profiled run's measured window opens and stopped
//! when it closes (never during the warm-up), and every window's recordings folded at the end,
//! once the load is over, so folding never competes with the gateway for the CPU.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::run::Window;
use crate::options::CallGraph;

use super::fold;
use super::program::{Perf, Recording};
use crate::results::profile::Folded;

/// What a session is asked to do.
#[derive(Debug, Clone)]
pub struct Settings {
    pub pid: u32,
    pub frequency: u32,
    pub call_graph: CallGraph,
    pub off_cpu: bool,
    /// Where the recordings are written until folded.
    pub dir: PathBuf,
}

/// A session: the recordings of the open window, and those of the windows before it.
#[derive(Debug)]
pub struct Session {
    perf: Perf,
    settings: Settings,
    open: Option<Open>,
    done: Vec<Done>,
    /// Processes sampled (the gateway's and those under it when the first window opened).
    pub processes: Vec<u32>,
    /// Why a window or a part of one was not recorded.
    pub problems: Vec<String>,
}

#[derive(Debug)]
struct Open {
    on: Option<Recording>,
    off: Option<Recording>,
}

#[derive(Debug)]
struct Done {
    on: Option<PathBuf>,
    off: Option<PathBuf>,
    recorded: Duration,
}

/// Every window folded.
#[derive(Debug, Default)]
pub struct Folding {
    pub on_cpu: Folded,
    pub off_cpu: Folded,
    pub windows: usize,
    /// Seconds perf recorded on-CPU, over every window.
    pub recorded_s: f64,
}

impl Session {
    pub fn new(perf: Perf, settings: Settings) -> Session {
        Session {
            perf,
            settings,
            open: None,
            done: Vec::new(),
            processes: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Starts or stops recording as a profiled run's window opens or closes.
    pub fn window(&mut self, window: Window) {
        match window {
            Window::Opened => self.start(),
            Window::Closed => self.stop(),
            Window::Starting | Window::Finished => {}
        }
    }

    fn start(&mut self) {
        let n = self.done.len() + 1;
        let pids = crate::engine::sampler::with_descendants(self.settings.pid);
        if !std::path::Path::new(&format!("/proc/{}", self.settings.pid)).exists() {
            self.problem(format!(
                "window {n}: process {} is no longer running",
                self.settings.pid
            ));
            return;
        }
        if self.processes.is_empty() {
            self.processes = pids.clone();
        }
        let on = self.perf.start_on_cpu(
            &pids,
            self.settings.frequency,
            self.settings.call_graph,
            self.settings.dir.join(format!("on-{n}.data")),
        );
        let on = on
            .map_err(|e| self.problem(format!("window {n}: on-CPU: {e}")))
            .ok();
        let off = if self.settings.off_cpu {
            let path = self.settings.dir.join(format!("off-{n}.data"));
            let off = self.perf.start_off_cpu(&pids, path);
            off.map_err(|e| self.problem(format!("window {n}: off-CPU: {e}")))
                .ok()
        } else {
            None
        };
        self.open = Some(Open { on, off });
    }

    fn stop(&mut self) {
        let Some(open) = self.open.take() else { return };
        let n = self.done.len() + 1;
        let mut recorded = Duration::ZERO;
        let on = open.on.and_then(|r| match r.stop() {
            Ok((path, took)) => {
                recorded = took;
                Some(path)
            }
            Err(e) => {
                self.problem(format!("window {n}: on-CPU: {e}"));
                None
            }
        });
        let off = open.off.and_then(|r| {
            r.stop()
                .map(|(path, _)| path)
                .map_err(|e| self.problem(format!("window {n}: off-CPU: {e}")))
                .ok()
        });
        self.done.push(Done { on, off, recorded });
    }

    fn problem(&mut self, text: String) {
        self.problems.push(text);
    }

    /// Stops a window left open (a stopped run), folds every window's recordings and removes
    /// them.
    pub fn fold(mut self) -> (Folding, Vec<String>, Perf) {
        self.stop();
        let mut folding = Folding::default();
        for (i, done) in self.done.iter().enumerate() {
            let n = i + 1;
            if let Some(path) = &done.on {
                match self
                    .perf
                    .script(path, fold::ON_CPU_FIELDS, false)
                    .and_then(|s| fold::on_cpu(&s))
                {
                    Ok(folded) => {
                        folding.on_cpu.merge(&folded);
                        folding.recorded_s += done.recorded.as_secs_f64();
                        folding.windows += 1;
                    }
                    Err(e) => self.problems.push(format!("window {n}: on-CPU: {e}")),
                }
            }
            if let Some(path) = &done.off {
                match self.perf.script(path, fold::OFF_CPU_FIELDS, true) {
                    Ok(s) => folding.off_cpu.merge(&fold::off_cpu(&s)),
                    Err(e) => self.problems.push(format!("window {n}: off-CPU: {e}")),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.settings.dir);
        (folding, self.problems, self.perf)
    }
}
