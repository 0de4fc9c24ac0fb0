//! The bpftrace program that counts a gateway's calls to the C allocator between loadgen's two
//! marks, each call once.
//!
//! glibc's `realloc`, `posix_memalign`, `aligned_alloc` and `memalign` often do their work by
//! calling `malloc` (and `realloc` by calling `free`) at the very address the `malloc` probe sits
//! on; a flag per thread, set from such a call's entry to its return, keeps the inner call from
//! being counted a second time.

use std::path::PathBuf;

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

/// `prctl` options loadgen's marks use: "GB" and 1 (open), 2 (close), 3 (are you attached?).
pub const OPEN: i32 = 0x4742_0001;
pub const CLOSE: i32 = 0x4742_0002;
pub const PING: i32 = 0x4742_0003;

/// What the program prints: once attached (to a ping), and at each mark it saw.
pub const READY: &str = "gatebench-ready";
pub const OPENED: &str = "gatebench-open";
pub const CLOSED: &str = "gatebench-close";

/// The name loadgen's worker threads start with.
const WORKER: &str = "loadgen-worker";

/// The allocator's entry points that allocate: name, the size in bytes from its arguments,
/// whether its return value is the block (for the live count; `posix_memalign` writes it
/// through its first argument, so its blocks are counted but not followed), and whether glibc
/// may call `malloc` (or `free`) inside it.
const ALLOCATING: [(&str, &str, bool, bool); 6] = [
    ("malloc", "arg0", true, false),
    ("calloc", "arg0 * arg1", true, false),
    ("realloc", "arg1", true, true),
    ("posix_memalign", "arg2", false, true),
    ("aligned_alloc", "arg1", true, true),
    ("memalign", "arg1", true, true),
];

/// The program for `probe`, counting only in processes `probe.pids`, between loadgen's marks
/// that carry `token`. The ping probe comes last, so the answer to a ping means every probe
/// before it is attached.
pub fn script(probe: &Probe, loadgen_pid: u32, token: u64) -> String {
    let libc = probe.libc.display();
    let who = probe
        .pids
        .iter()
        .map(|p| format!("pid == {p}"))
        .collect::<Vec<_>>()
        .join(" || ");
    let on = format!("@on && ({who})");
    let outer = format!("{on} && !@in[tid]");
    let mark = |option: i32, then: &str| {
        format!(
            "tracepoint:syscalls:sys_enter_prctl /pid == {loadgen_pid} && args->option == \
             {option} && args->arg2 == {token}/ {{ {then} }}\n"
        )
    };
    let mut s = mark(OPEN, &format!("@on = 1; printf(\"{OPENED}\\n\");"));
    s.push_str(&mark(
        CLOSE,
        &format!("@on = 0; printf(\"{CLOSED}\\n\"); exit();"),
    ));
    let forget = if probe.live {
        " delete(@live[arg0]); delete(@where[arg0]);"
    } else {
        ""
    };
    for (entry, size, returns, nests) in ALLOCATING {
        let follow = if probe.live && returns {
            format!(" @size[tid] = {size};")
        } else {
            String::new()
        };
        let moved = if entry == "realloc" { forget } else { "" };
        let inside = if nests { " @in[tid] = 1;" } else { "" };
        s.push_str(&format!(
            "uprobe:{libc}:{entry} /{outer}/ {{ @calls[\"{entry}\"] = count(); @bytes = \
             sum({size}); @stacks[comm, ustack(perf)] = sum({size});{moved}{follow}{inside} }}\n"
        ));
        let live = if probe.live && returns {
            " if (@size[tid]) { @live[retval] = @size[tid]; @where[retval] = (comm, \
             ustack(perf)); delete(@size[tid]); }"
        } else {
            ""
        };
        if nests || !live.is_empty() {
            s.push_str(&format!(
                "uretprobe:{libc}:{entry} /{on}/ {{{live} delete(@in[tid]); }}\n"
            ));
        }
        // loadgen's workers' own calls: the probes sit in every process that maps this libc,
        // so a worker pays a trap for each of its allocations while they are attached.
        s.push_str(&format!(
            "uprobe:{libc}:{entry} /@on && pid == {loadgen_pid} && strncmp(comm, \"{WORKER}\", \
             {len}) == 0/ {{ @own = count(); }}\n",
            len = WORKER.len()
        ));
    }
    s.push_str(&format!(
        "uprobe:{libc}:free /{outer} && arg0 != 0/ {{ @calls[\"free\"] = count();{forget} }}\n"
    ));
    // A map the program never writes would not compile: @size exists only when following.
    s.push_str(if probe.live {
        "END { clear(@size); clear(@in); }\n"
    } else {
        "END { clear(@in); }\n"
    });
    s.push_str(&mark(PING, &format!("printf(\"{READY}\\n\");")));
    s
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
        assert!(
            s.contains("@on && (pid == 10 || pid == 11) && !@in[tid]"),
            "{s}"
        );
        for entry in [
            "malloc",
            "calloc",
            "realloc",
            "free",
            "posix_memalign",
            "memalign",
        ] {
            assert!(s.contains(&format!("libc.so.6:{entry} /")), "{entry}: {s}");
        }
        assert!(s.contains("strncmp(comm, \"loadgen-worker\", 14)"), "{s}");
        // The ping answers last: every probe before it is attached.
        assert!(
            s.trim_end()
                .ends_with(&format!("printf(\"{READY}\\n\"); }}")),
            "{s}"
        );
    }

    #[test]
    fn a_call_inside_another_is_not_counted_twice() {
        let s = script(&probe(false), 99, 5);
        // realloc and the aligned allocators set the flag and clear it on return; malloc
        // and free skip while it is set.
        assert_eq!(s.matches("@in[tid] = 1;").count(), 4, "{s}");
        assert_eq!(s.matches("uretprobe").count(), 4, "{s}");
        assert!(!s.contains("@size"), "no map left unwritten: {s}");
        let live = script(&probe(true), 99, 5);
        assert_eq!(live.matches("uretprobe").count(), 6, "{live}");
    }
}
