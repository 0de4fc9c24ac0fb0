//! `--memory` checked before anything is sent: the flags read, the source chosen for the
//! gateway's runtime and tried (bpftrace found and allowed to trace), and whatever stands in the
//! way said at once; the load still runs when it does.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::run::SetupError;
use crate::generator::plan_error::PlanError;
use crate::options::{MemoryArgs, MEMORY_REST};
use crate::results::cost::Price;
use crate::wire::target::parse_target;

use crate::engine::profiler::bpftrace;
use crate::engine::profiler::source::{self, Runtime, Source};

/// A checked `--memory`.
#[derive(Debug, Clone)]
pub struct MemoryPlan {
    /// The source, or why none can be used (said before the load, kept for the result).
    pub source: Result<Source, String>,
    /// `bpftrace --version`, for the C allocator.
    pub tool: Option<String>,
    pub bpftrace: PathBuf,
    pub rest: Duration,
    pub live: bool,
    pub price: Option<Price>,
}

impl MemoryPlan {
    /// The plan, `None` without `--memory`; a bad flag is an error.
    pub fn new(args: &MemoryArgs, pid: u32) -> Result<Option<MemoryPlan>, SetupError> {
        if !args.memory {
            let given = [
                args.price.is_some(),
                args.memory_source.is_some(),
                args.memory_url.is_some(),
                args.pprof_url.is_some(),
                args.live.is_some(),
                args.rest.is_some(),
                args.bpftrace.is_some(),
            ];
            if given.contains(&true) {
                return Err(SetupError::Other(
                    "--memory-source, --memory-url, --pprof-url, --live, --rest, --price and \
                     --bpftrace go with --memory"
                        .into(),
                ));
            }
            return Ok(None);
        }
        let runtime = match args.memory_source.as_deref() {
            None | Some("auto") => source::runtime_of(pid),
            Some(text) => Runtime::parse(text)
                .ok_or_else(|| bad("--memory-source", text, "auto, c, python, go or node"))?,
        };
        let url = url(args.memory_url.as_deref(), "--memory-url")?;
        let pprof = url_pprof(args.pprof_url.as_deref())?;
        let rest = humantime::parse_duration(args.rest.as_deref().unwrap_or(MEMORY_REST)).map_err(
            |_| {
                bad(
                    "--rest",
                    args.rest.as_deref().unwrap_or(""),
                    "a duration, like 2s",
                )
            },
        )?;
        let live = match args.live.as_deref() {
            None | Some("on") => true,
            Some("off") => false,
            Some(text) => return Err(bad("--live", text, "on or off")),
        };
        let price = match args.price.as_deref() {
            None => None,
            Some(text) => Some(
                text.parse::<Price>()
                    .map_err(|e| SetupError::Other(e.to_string()))?,
            ),
        };
        let program = args.bpftrace.clone().unwrap_or_else(|| "bpftrace".into());
        let mut source = source::choose(pid, runtime, url.as_ref(), pprof.as_ref());
        let mut tool = None;
        if let Ok(Source::CAllocator { .. }) = &source {
            match may_trace(&program) {
                Ok(version) => tool = Some(version),
                Err(e) => source = Err(e),
            }
        }
        Ok(Some(MemoryPlan {
            source,
            tool,
            bpftrace: program,
            rest,
            live,
            price,
        }))
    }
}

/// bpftrace's version when it is here and may attach uprobes (as root).
fn may_trace(program: &std::path::Path) -> Result<String, String> {
    if !source::exists(program) {
        return Err(format!(
            "{} is not installed (Debian: apt-get install bpftrace), so the C allocator cannot \
             be probed",
            program.display()
        ));
    }
    // SAFETY: geteuid reads the process's credentials and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "bpftrace's uprobes need root (CAP_BPF and CAP_PERFMON): run loadgen as root to \
             count the C allocator's calls"
                .into(),
        );
    }
    let version = bpftrace::version(program)?;
    bpftrace::may_attach(program)?;
    Ok(version)
}

/// A URL of the gateway's own pages, its path as written (`/` when none: a target's path would
/// default to the chat route).
fn url(
    text: Option<&str>,
    flag: &'static str,
) -> Result<Option<crate::model::target::Target>, SetupError> {
    let Some(t) = text else {
        return Ok(None);
    };
    let mut target = parse_target(t).map_err(|e| SetupError::Other(format!("{flag} {t}: {e}")))?;
    let rest = t.split_once("://").map_or(t, |(_, rest)| rest);
    target.path = rest
        .find('/')
        .map_or("/".into(), |at| rest[at..].to_string());
    Ok(Some(target))
}

fn url_pprof(text: Option<&str>) -> Result<Option<crate::model::target::Target>, SetupError> {
    url(text, "--pprof-url")
}

fn bad(flag: &'static str, text: &str, expected: &'static str) -> SetupError {
    SetupError::from(PlanError::Named(flag, text.to_string(), expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_its_own_path() {
        let root = url(Some("http://127.0.0.1:9/"), "--memory-url")
            .unwrap()
            .unwrap();
        assert_eq!(root.path, "/");
        let bare = url(Some("http://127.0.0.1:9"), "--memory-url")
            .unwrap()
            .unwrap();
        assert_eq!(bare.path, "/", "not the chat route");
        let pprof = url(Some("http://127.0.0.1:9/debug/pprof"), "--pprof-url")
            .unwrap()
            .unwrap();
        assert_eq!(pprof.path, "/debug/pprof");
    }
}
