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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_limit_ends_at_the_hard_limit() {
        let limit = raise_open_file_limit().unwrap();
        assert_eq!(limit.soft, limit.hard);
        assert!(limit.soft >= 64);
    }
}
