//! Facts about the machine a process runs on, and the limits it raises for itself.

/// The open-file limit after [`raise_open_file_limit`]: what the process can now open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileLimit {
    pub soft: u64,
    pub hard: u64,
}

/// Raises the soft open-file limit to the hard one (each connection is a descriptor, and the
/// usual soft default of 1,024 is far below what a load test opens). Returns the limits in
/// force afterwards, or the OS error if they cannot be read.
pub fn raise_open_file_limit() -> std::io::Result<OpenFileLimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct we pass, which lives for the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    Ok(OpenFileLimit {
        soft: limit.rlim_cur,
        hard: limit.rlim_max,
    })
}

/// What a result discloses about the machine it was measured on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostFacts {
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    pub memory_bytes: u64,
    pub hostname: String,
}

impl HostFacts {
    /// Reads the facts from `/proc` (fields it cannot read are left empty or zero).
    pub fn read() -> HostFacts {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let memory_kib = read("/proc/meminfo")
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        HostFacts {
            cpu_model,
            cores: online_cores(),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            memory_bytes: memory_kib * 1024,
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
        }
    }
}

/// Cores online on the machine (not only those this thread may run on: a pinned thread would
/// otherwise report one).
pub fn online_cores() -> usize {
    // SAFETY: sysconf reads a system setting and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(0, |n| n.get()))
}

/// Parses core ids like `0`, `0,1`, `0-3`, `0,2-3`, each below `cores`.
pub fn parse_cores(text: &str, cores: usize) -> Option<Vec<usize>> {
    let mut ids = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lo: usize = lo.trim().parse().ok()?;
        let hi: usize = hi.trim().parse().ok()?;
        if lo > hi || hi >= cores {
            return None;
        }
        ids.extend(lo..=hi);
    }
    Some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_facts_are_read() {
        let facts = HostFacts::read();
        assert!(facts.cores >= 1);
        assert!(facts.memory_bytes > 0);
        assert!(!facts.kernel.is_empty());
    }

    #[test]
    fn cores_parse() {
        assert_eq!(parse_cores("0,2-3", 4), Some(vec![0, 2, 3]));
        assert_eq!(parse_cores("4", 4), None);
        assert_eq!(parse_cores("x", 4), None);
    }

    #[test]
    fn soft_limit_ends_at_the_hard_limit() {
        let limit = raise_open_file_limit().unwrap();
        assert_eq!(limit.soft, limit.hard);
        assert!(limit.soft >= 64);
    }
}
