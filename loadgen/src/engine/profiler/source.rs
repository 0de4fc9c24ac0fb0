//! Which source counts a gateway's allocations: found from its process (the executable, its
//! environment, the libc it maps) or named with `--memory-source`, and checked before any load,
//! so a source that cannot work is said at once.

use std::path::{Path, PathBuf};

use crate::model::target::Target;

/// A source, ready to read.
#[derive(Debug, Clone)]
pub enum Source {
    /// bpftrace's uprobes on this libc; `python`: CPython under `PYTHONMALLOC=malloc`.
    CAllocator { libc: PathBuf, python: bool },
    /// Go's runtime counters (a Prometheus page) and, optionally, its heap profile.
    Go {
        metrics: Target,
        pprof: Option<Target>,
    },
    /// V8's sampling heap profiler, served by `scripts/gateways/lib/v8-heap.js`.
    Node { endpoint: Target },
}

/// The runtime a process runs, as far as its executable tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Native,
    Python,
    Go,
    Node,
}

impl Runtime {
    pub fn parse(text: &str) -> Option<Runtime> {
        match text {
            "c" => Some(Runtime::Native),
            "python" => Some(Runtime::Python),
            "go" => Some(Runtime::Go),
            "node" => Some(Runtime::Node),
            _ => None,
        }
    }
}

/// The runtime of process `pid`: Python or Node by the executable's name, Go by the build
/// information every Go binary carries, native otherwise.
pub fn runtime_of(pid: u32) -> Runtime {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let name = exe
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if name.starts_with("python") {
        Runtime::Python
    } else if name == "node" || name.starts_with("nodejs") {
        Runtime::Node
    } else if is_go(&format!("/proc/{pid}/exe")) {
        Runtime::Go
    } else {
        Runtime::Native
    }
}

/// Whether the executable holds Go's build information (`\xff Go buildinf:`).
fn is_go(path: &str) -> bool {
    const MAGIC: &[u8] = b"\xff Go buildinf:";
    std::fs::read(path)
        .map(|bytes| bytes.windows(MAGIC.len()).any(|w| w == MAGIC))
        .unwrap_or(false)
}

/// The source for `runtime` on process `pid`, or why there is none.
pub fn choose(
    pid: u32,
    runtime: Runtime,
    url: Option<&Target>,
    pprof: Option<&Target>,
) -> Result<Source, String> {
    match runtime {
        Runtime::Native => c_allocator(pid, false),
        Runtime::Python => {
            if !environ_has(pid, "PYTHONMALLOC=malloc") {
                return Err(format!(
                    "process {pid} is CPython without PYTHONMALLOC=malloc: its small objects come \
                     from pymalloc's arenas, which the C allocator never sees; start it with \
                     PYTHONMALLOC=malloc in its environment (a change to the gateway, whose cost \
                     the result measures) or name another --memory-source"
                ));
            }
            c_allocator(pid, true)
        }
        Runtime::Go => match url {
            Some(metrics) => Ok(Source::Go {
                metrics: metrics.clone(),
                pprof: pprof.cloned(),
            }),
            None => Err(format!(
                "process {pid} is a Go program: its allocations are counted by its runtime, read \
                 from a Prometheus page with go_memstats_mallocs_total (--memory-url URL, like \
                 Traefik's --metrics.prometheus or Caddy's admin /metrics); the C allocator would \
                 see none of them"
            )),
        },
        Runtime::Node => match url {
            Some(endpoint) => Ok(Source::Node {
                endpoint: endpoint.clone(),
            }),
            None => Err(format!(
                "process {pid} is Node.js: V8 allocates on its own heap, counted by its sampling \
                 heap profiler inside the process; start it with `--require \
                 scripts/gateways/lib/v8-heap.js` and GATEBENCH_V8_HEAP_PORT=PORT, then give \
                 --memory-url http://127.0.0.1:PORT/"
            )),
        },
    }
}

fn c_allocator(pid: u32, python: bool) -> Result<Source, String> {
    match super::bpftrace::libc_of(pid) {
        Some(libc) => Ok(Source::CAllocator { libc, python }),
        None => Err(format!(
            "process {pid} maps no libc (a static binary, or an allocator of its own linked in): \
             no C allocator to probe"
        )),
    }
}

/// Whether process `pid`'s environment holds `entry` (`NAME=value`).
fn environ_has(pid: u32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|bytes| bytes.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
        .unwrap_or(false)
}

impl Source {
    /// The source's name in the result.
    pub fn name(&self) -> &'static str {
        match self {
            Source::CAllocator { python: false, .. } => "c-allocator",
            Source::CAllocator { python: true, .. } => "python",
            Source::Go { .. } => "go-runtime",
            Source::Node { .. } => "v8-sampling",
        }
    }

    /// What it counts, in words.
    pub fn counts(&self) -> &'static str {
        match self {
            Source::CAllocator { python: false, .. } => {
                "calls to the C allocator (malloc, calloc, realloc, posix_memalign, aligned_alloc, \
                 memalign; bytes asked for), exact; a gateway that serves requests from its own \
                 pools (nginx, HAProxy) calls it only for a pool, so this is not every object it \
                 makes"
            }
            Source::CAllocator { python: true, .. } => {
                "calls to the C allocator by CPython under PYTHONMALLOC=malloc (every object, \
                 pymalloc bypassed: a change to the gateway), exact"
            }
            Source::Go { .. } => {
                "Go heap objects and bytes allocated (the runtime's go_memstats counters), exact; \
                 stacks from the heap profile, sampled"
            }
            Source::Node { .. } => {
                "V8 heap bytes estimated from its sampling heap profiler (one sample per sampling \
                 interval of bytes), collected objects included: estimates, not counts (within \
                 about 30% of the GC's own count in a check, high); its object count is not \
                 meaningful for objects much smaller than the interval"
            }
        }
    }
}

/// Whether `path` names an existing program (or one on the PATH).
pub fn exists(program: &Path) -> bool {
    if program.components().count() > 1 {
        return program.exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_is_native_and_maps_a_libc() {
        let me = std::process::id();
        assert_eq!(runtime_of(me), Runtime::Native);
        let source = choose(me, Runtime::Native, None, None).unwrap();
        assert_eq!(source.name(), "c-allocator");
    }

    #[test]
    fn a_python_without_the_c_allocator_or_a_go_without_its_page_is_refused() {
        let me = std::process::id();
        let e = choose(me, Runtime::Python, None, None).unwrap_err();
        assert!(e.contains("PYTHONMALLOC=malloc"), "{e}");
        let e = choose(me, Runtime::Go, None, None).unwrap_err();
        assert!(e.contains("--memory-url"), "{e}");
        let e = choose(me, Runtime::Node, None, None).unwrap_err();
        assert!(e.contains("v8-heap.js"), "{e}");
    }
}
