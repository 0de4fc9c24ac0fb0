//! One memory session: at each probed run's edges, memory at rest sampled (before it starts and
//! after it ends), the source attached or read as the measured window opens and closes, and the
//! window's counts kept for the result.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::run::Window;
use crate::results::memory::TrialMemory;
use crate::results::profile::Folded;

use super::bpftrace::{self, maps, Attached, Probe};
use super::reading::Reading;
use super::rest;
use super::source::Source;

/// What a session is asked to do.
#[derive(Debug, Clone)]
pub struct Settings {
    pub pid: u32,
    pub source: Source,
    pub bpftrace: PathBuf,
    /// How long memory at rest is sampled before and after each probed run.
    pub rest: Duration,
    /// Whether the C allocator's allocations are tracked until freed (the live stacks).
    pub live: bool,
}

/// A session over every probed run.
pub struct MemorySession {
    settings: Settings,
    pids: Vec<u32>,
    attached: Option<Attached>,
    before: Option<Reading>,
    current: TrialMemory,
    /// Every probed window, in order.
    pub trials: Vec<TrialMemory>,
    pub allocated: Folded,
    pub live: Folded,
    /// Whether any window had stacks (and live stacks).
    pub had_stacks: bool,
    pub had_live: bool,
    /// The processes counted.
    pub processes: Vec<u32>,
    /// Why a window or a part of one was not counted.
    pub problems: Vec<String>,
    /// What the runtime said of its own figures (V8's sampling interval), when it did.
    pub described: Option<String>,
}

impl MemorySession {
    pub fn new(settings: Settings) -> MemorySession {
        MemorySession {
            settings,
            pids: Vec::new(),
            attached: None,
            before: None,
            current: TrialMemory::default(),
            trials: Vec::new(),
            allocated: Folded::default(),
            live: Folded::default(),
            had_stacks: false,
            had_live: false,
            processes: Vec::new(),
            problems: Vec::new(),
            described: None,
        }
    }

    /// Acts on a probed run's edge.
    pub fn window(&mut self, window: Window) {
        match window {
            Window::Starting => self.starting(),
            Window::Opened => self.opened(),
            Window::Closed => self.closed(),
            Window::Finished => self.finished(),
        }
    }

    fn starting(&mut self) {
        let n = self.trials.len() + 1;
        self.current = TrialMemory {
            trial: n,
            ..Default::default()
        };
        self.pids = crate::engine::sampler::with_descendants(self.settings.pid);
        if self.processes.is_empty() {
            self.processes = self.pids.clone();
        }
        self.current.rest_before = rest::sample(&self.pids, self.settings.rest);
        match &self.settings.source {
            Source::CAllocator { libc, .. } => {
                let probe = Probe {
                    program: self.settings.bpftrace.clone(),
                    libc: libc.clone(),
                    pids: self.pids.clone(),
                    live: self.settings.live,
                };
                match bpftrace::attach(&probe) {
                    Ok(a) => self.attached = Some(a),
                    Err(e) => self.problem(format!("window {n}: {e}")),
                }
            }
            _ => {
                self.current.heap_before_bytes = self.read(true).and_then(|r| r.live_heap_bytes);
            }
        }
    }

    fn opened(&mut self) {
        match &self.settings.source {
            Source::CAllocator { .. } => {
                if let Some(a) = &self.attached {
                    a.open_window();
                }
            }
            _ => self.before = self.read(true),
        }
    }

    fn closed(&mut self) {
        let n = self.current.trial;
        let gone: Vec<u32> = self
            .pids
            .iter()
            .copied()
            .filter(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
            .collect();
        if !gone.is_empty() {
            self.problem(format!(
                "window {n}: process(es) {gone:?} ended during the window: its counts stop there"
            ));
        }
        match &self.settings.source {
            Source::CAllocator { .. } => {
                let Some(attached) = self.attached.take() else {
                    return;
                };
                match attached.close() {
                    Ok(printed) => {
                        for w in printed.warnings {
                            self.problem(format!("window {n}: {w}"));
                        }
                        self.counted(maps::parse(&printed.text));
                    }
                    Err(e) => self.problem(format!("window {n}: {e}")),
                }
            }
            _ => {
                let (Some(before), Some(after)) = (self.before.take(), self.read(false)) else {
                    return;
                };
                let w = after.since(&before);
                self.current.allocs = w.allocs;
                self.current.bytes = w.bytes;
                self.current.frees = w.frees;
                if let Some(stacks) = w.stacks {
                    self.had_stacks = true;
                    self.allocated.merge(&stacks);
                }
                self.current.counted = true;
            }
        }
    }

    fn counted(&mut self, maps: maps::Maps) {
        let frees = maps.calls.get("free").copied().unwrap_or(0);
        self.current.allocs = maps
            .calls
            .iter()
            .filter(|(name, _)| name.as_str() != "free")
            .map(|(_, n)| *n)
            .sum::<u64>() as f64;
        self.current.bytes = maps.bytes as f64;
        self.current.frees = Some(frees as f64);
        self.current.calls = maps.calls.clone();
        self.current.loadgen_allocs = Some(maps.own);
        self.current.counted = true;
        if !maps.stacks.is_empty() {
            self.had_stacks = true;
            self.allocated.merge(&maps.stacks);
        }
        if self.settings.live {
            self.had_live = true;
            self.current.live_at_end_bytes = Some(maps.live_bytes as f64);
            self.live.merge(&maps.live);
        }
    }

    fn finished(&mut self) {
        if let Some(attached) = self.attached.take() {
            // The run ended before its window opened (stopped): nothing was counted.
            attached.abandon();
        }
        self.current.rest_after = rest::sample(&self.pids, self.settings.rest);
        if !matches!(self.settings.source, Source::CAllocator { .. }) {
            self.current.heap_after_bytes = self.read(false).and_then(|r| r.live_heap_bytes);
        }
        let trial = std::mem::take(&mut self.current);
        self.trials.push(trial);
    }

    /// The runtime source's reading now (`opening` a window: see `go::read`), or `None` with
    /// the problem kept.
    fn read(&mut self, opening: bool) -> Option<Reading> {
        let n = self.trials.len() + 1;
        let read = match &self.settings.source {
            Source::Go { metrics, pprof } => {
                super::go::read(metrics, pprof.as_ref(), opening).map(|g| {
                    for p in g.problems {
                        self.problems.push(format!("window {n}: {p}"));
                    }
                    g.reading
                })
            }
            Source::Node { endpoint } => super::node::read(endpoint).map(|r| {
                self.described = Some(r.describe());
                r.reading
            }),
            Source::CAllocator { .. } => return None,
        };
        match read {
            Ok(r) => Some(r),
            Err(e) => {
                self.problem(format!("window {n}: {e}"));
                None
            }
        }
    }

    fn problem(&mut self, text: String) {
        if !self.problems.contains(&text) {
            self.problems.push(text);
        }
    }
}
