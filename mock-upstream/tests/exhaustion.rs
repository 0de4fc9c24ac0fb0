//! The binary out of file descriptors: with a low open-file limit and more clients than it
//! allows, the accept loop backs off instead of spinning or dying, and serves again once
//! clients leave.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use common::{mock, start};

/// The open-file limit of the child, soft and hard (it raises the soft one to the hard one).
const FILES: libc::rlim_t = 48;

/// CPU time (user + system) of a process so far, in seconds.
fn cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start at its closing parenthesis.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// Descriptors a process holds open.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

fn get(addr: &str, path: &str) -> std::io::Result<String> {
    let mut tcp = TcpStream::connect(addr)?;
    tcp.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        tcp,
        "GET {path} HTTP/1.1\r\nhost: m\r\nconnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    tcp.read_to_string(&mut answer)?;
    Ok(answer)
}

#[test]
fn out_of_descriptors_the_accept_loop_backs_off_and_recovers() {
    let mut cmd = mock();
    cmd.args(["--listen", "127.0.0.1:0", "--threads", "1"]);
    // SAFETY: setrlimit is async-signal-safe, and the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: FILES,
                rlim_max: FILES,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut server = start(&mut cmd);
    let (addr, pid) = (server.addr.clone(), server.child.id());

    // Twice as many idle connections as it has descriptors: the kernel's backlog takes them,
    // the mock accepts until it runs out.
    let clients: Vec<TcpStream> = (0..2 * FILES)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    // Out of descriptors once every one it may open is open: from then on each accept fails.
    let deadline = Instant::now() + Duration::from_secs(30);
    while open_files(pid) < FILES as usize {
        assert!(
            Instant::now() < deadline,
            "30 s on, the mock holds {} of its {FILES} descriptors",
            open_files(pid)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (cpu_before, wall) = (cpu_s(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let busy = (cpu_s(pid) - cpu_before) / wall.elapsed().as_secs_f64();
    // A loop retrying a failing accept at once would keep a core busy; backing off is idle.
    assert!(
        busy < 0.5,
        "the mock used {busy:.2} of a core while out of descriptors"
    );
    assert!(server.child.try_wait().unwrap().is_none(), "the mock died");

    drop(clients);
    // Every descriptor comes back as the idle clients go; it serves again.
    let deadline = Instant::now() + Duration::from_secs(30);
    let metrics = loop {
        match get(&addr, "/metrics") {
            Ok(answer) if answer.starts_with("HTTP/1.1 200") => break answer,
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            other => panic!("not serving after the clients left: {other:?}"),
        }
    };
    let errors = metrics
        .lines()
        .find_map(|l| l.strip_prefix("mock_accept_errors_total "))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap();
    assert!(errors > 0, "{metrics}");
    assert!(get(&addr, "/health").unwrap().starts_with("HTTP/1.1 200"));

    assert!(server.terminate().success());
}
