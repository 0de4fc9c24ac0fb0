//! Go's own counts, read at one edge of a window: the runtime's cumulative counters from a
//! Prometheus page (`go_memstats_*`, which every `client_golang` registry exports), and, where
//! the gateway serves `net/http/pprof`, its heap profile folded into stacks weighted by bytes.
//!
//! The counters are the runtime's own, not samples: every heap object allocated and freed and
//! every byte, since the process started (to within the free slots each P holds in its cache,
//! which the runtime counts when it takes a span). Objects include tiny ones (under 16 bytes,
//! without pointers), several of which share one 16-byte block: the bytes count the blocks. The heap profile is sampled (one allocation
//! per `runtime.MemProfileRate` bytes on average, 512 KiB by default) and is scaled back here as
//! pprof does; the runtime publishes it at each completed garbage collection, so a window's
//! stacks lag its counters by up to a cycle.

use std::time::Duration;

use super::reading::Reading;
use crate::model::target::Target;
use crate::results::profile::Folded;
use crate::wire::get::get_limited;

/// Largest metrics page read (a gateway with many routes exports many series).
const METRICS_MAX_BYTES: usize = 16 << 20;
/// Time allowed for the metrics page.
const METRICS_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest heap profile read (a record and its symbols are a few hundred bytes each).
const PROFILE_MAX_BYTES: usize = 64 << 20;
/// Time allowed for the heap profile, which the runtime symbolises as it writes.
const PROFILE_TIMEOUT: Duration = Duration::from_secs(10);

/// The counters read, by their Prometheus names.
const MALLOCS: &str = "go_memstats_mallocs_total";
const ALLOC_BYTES: &str = "go_memstats_alloc_bytes_total";
const FREES: &str = "go_memstats_frees_total";
const HEAP_ALLOC: &str = "go_memstats_heap_alloc_bytes";
/// The stack of a record the runtime wrote without one.
const NO_STACK: &str = "(no stack)";

/// One reading of a Go process.
#[derive(Debug, Clone, PartialEq)]
pub struct GoReading {
    /// Heap objects allocated and freed, bytes allocated and live; with stacks when the heap
    /// profile was read.
    pub reading: Reading,
    /// The heap profile's sampling period (`runtime.MemProfileRate`, bytes), when it was read.
    pub profile_rate_bytes: Option<u64>,
    /// Why the stacks are missing although a profile was asked for; empty when they are there
    /// or none was asked for. The counters stand without them.
    pub problems: Vec<String>,
}

/// The counters on the Prometheus text page at `metrics` (its path), and with `pprof` (the
/// base of `net/http/pprof`, like `http://127.0.0.1:2019/debug/pprof`) the stacks of
/// `<base>/allocs?debug=1`. Fails only when the counters cannot be read; a profile that
/// cannot be read leaves `stacks` empty and says why in `problems`.
///
/// `opening`: the reading opens a window, so the profile is read first and the counters
/// last; at a window's close the counters first. Rendering the profile allocates in the
/// gateway, and either way that stays outside the window.
pub fn read(metrics: &Target, pprof: Option<&Target>, opening: bool) -> Result<GoReading, String> {
    let mut stacks = None;
    if opening {
        stacks = pprof.map(profile_of);
    }
    let page = get_limited(metrics, &metrics.path, METRICS_MAX_BYTES, METRICS_TIMEOUT)?;
    let url = format!("http://{}{}", metrics.authority, metrics.path);
    let mut out = GoReading {
        reading: counters(&page, &url)?,
        profile_rate_bytes: None,
        problems: Vec::new(),
    };
    if !opening {
        stacks = pprof.map(profile_of);
    }
    match stacks {
        Some(Ok(profile)) => {
            out.reading.stacks = Some(profile.stacks);
            out.profile_rate_bytes = Some(profile.rate_bytes);
        }
        Some(Err(why)) => out.problems.push(format!("no allocation stacks: {why}")),
        None => {}
    }
    Ok(out)
}

/// The heap profile under the pprof base `base`, or why it cannot be read.
fn profile_of(base: &Target) -> Result<HeapProfile, String> {
    let path = profile_path(&base.path);
    let url = format!("http://{}{path}", base.authority);
    get_limited(base, &path, PROFILE_MAX_BYTES, PROFILE_TIMEOUT)
        .and_then(|text| heap_profile(&text).map_err(|why| format!("{url}: {why}")))
}

/// The heap profile's path under the pprof base (which may name `allocs` or `heap` already).
fn profile_path(base: &str) -> String {
    let base = base
        .split('?')
        .next()
        .unwrap_or_default()
        .trim_end_matches('/');
    let base = base
        .strip_suffix("/allocs")
        .or_else(|| base.strip_suffix("/heap"))
        .unwrap_or(base);
    format!("{base}/allocs?debug=1")
}

/// The runtime's counters on a Prometheus text page read from `url`.
fn counters(page: &str, url: &str) -> Result<Reading, String> {
    let mallocs = sample(page, MALLOCS)?;
    let bytes = sample(page, ALLOC_BYTES)?;
    let frees = sample(page, FREES)?;
    let (Some(allocs), Some(bytes), Some(frees)) = (mallocs, bytes, frees) else {
        let missing: Vec<&str> = [(MALLOCS, mallocs), (ALLOC_BYTES, bytes), (FREES, frees)]
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(name, _)| *name)
            .collect();
        return Err(format!(
            "{url} has no {}: not the Prometheus page of a Go process whose registry exports \
             the runtime's memory statistics (client_golang's Go collector)",
            missing.join(", ")
        ));
    };
    Ok(Reading {
        allocs,
        bytes,
        frees: Some(frees),
        live_heap_bytes: sample(page, HEAP_ALLOC)?,
        stacks: None,
    })
}

/// The value of metric `name` on a Prometheus text page, with or without labels: `None` when
/// absent; an error when it is there more than once (which process would it be?) or its value
/// is not a number at or above zero.
fn sample(page: &str, name: &str) -> Result<Option<f64>, String> {
    let mut found = None;
    for line in page.lines().map(str::trim_start) {
        if line.starts_with('#') {
            continue;
        }
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let rest = match rest.chars().next() {
            Some('{') => after_labels(rest).ok_or_else(|| format!("{name}: unclosed labels"))?,
            Some(' ' | '\t') => rest,
            // Another metric whose name starts with this one.
            _ => continue,
        };
        let text = rest.split_whitespace().next().unwrap_or_default();
        let value = text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("{name} is '{text}', not a count"))?;
        if found.replace(value).is_some() {
            return Err(format!(
                "{name} is there more than once (several processes on one page?)"
            ));
        }
    }
    Ok(found)
}

/// What follows a `{…}` label set at the start of `text` (quoted values may hold `}` and
/// escapes); `None` when it does not close.
fn after_labels(text: &str) -> Option<&str> {
    let (mut quoted, mut escaped) = (false, false);
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(&text[at + 1..]),
            _ => {}
        }
    }
    None
}

/// A heap profile's stacks and its sampling period.
#[derive(Debug, Clone, PartialEq)]
struct HeapProfile {
    /// Bytes allocated by stack, root first, scaled from the samples.
    stacks: Folded,
    /// `runtime.MemProfileRate`.
    rate_bytes: u64,
}

/// One record of the legacy text profile: its sampled allocations and its frames, leaf first.
#[derive(Debug, Default)]
struct Record {
    alloc_objects: u64,
    alloc_bytes: u64,
    addresses: Vec<String>,
    frames: Vec<String>,
}

/// Parses Go's legacy text heap profile (`debug=1`, written by `runtime/pprof`): a header
/// `heap profile: A: B [C: D] @ heap/2×RATE`, then records `inuse_objs: inuse_bytes
/// [alloc_objs: alloc_bytes] @ 0xpc …` each followed by `#\t0xpc\tfunc+0xoff\tfile:line`
/// lines (leaf first; tab-aligned), then a `# runtime.MemStats` section, ignored.
fn heap_profile(text: &str) -> Result<HeapProfile, String> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let header = lines.next().unwrap_or_default();
    let rate = header_rate(header).ok_or_else(|| {
        format!(
            "not a Go heap profile: its first line is '{}'",
            clip(header)
        )
    })?;
    if rate == 0 {
        return Err("the heap profile is off (runtime.MemProfileRate is 0)".into());
    }
    let mut stacks = Folded::default();
    let mut record: Option<Record> = None;
    for line in lines {
        if line.starts_with("# runtime.MemStats") {
            break;
        }
        if let Some(symbol) = line.strip_prefix('#') {
            if let (Some(r), Some(frame)) = (record.as_mut(), frame(symbol)) {
                r.frames.push(frame);
            }
        } else if !line.trim().is_empty() {
            let next = parse_record(line)
                .ok_or_else(|| format!("a record that does not parse: '{}'", clip(line)))?;
            if let Some(done) = record.replace(next) {
                add(&mut stacks, done, rate);
            }
        }
    }
    if let Some(done) = record {
        add(&mut stacks, done, rate);
    }
    Ok(HeapProfile {
        stacks,
        rate_bytes: rate,
    })
}

/// `runtime.MemProfileRate` from a profile's header: Go writes twice the rate after `heap/`
/// (what the C++ heap profiler wrote, and what pprof divides by two).
fn header_rate(header: &str) -> Option<u64> {
    let rest = header.trim().strip_prefix("heap profile:")?;
    let (_, tail) = rest.rsplit_once('@')?;
    let tail = tail.trim();
    if let Some(n) = tail.strip_prefix("heap_v2/") {
        return n.trim().parse().ok();
    }
    tail.strip_prefix("heap/")?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|n| n / 2)
}

/// A record line `A: B [C: D] @ 0x1 0x2 …`.
fn parse_record(line: &str) -> Option<Record> {
    let (counts, addresses) = line.split_once('@')?;
    let numbers: Vec<u64> = counts
        .split(|c: char| c == ':' || c == '[' || c == ']' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [_, _, alloc_objects, alloc_bytes] = numbers[..] else {
        return None;
    };
    Some(Record {
        alloc_objects,
        alloc_bytes,
        addresses: addresses.split_whitespace().map(str::to_string).collect(),
        frames: Vec::new(),
    })
}

/// The function a symbol line (after its `#`) names, without its `+0xoffset`; the address
/// when the runtime had no name for it. `None` for a line that is not a frame.
fn frame(symbol: &str) -> Option<String> {
    let mut fields = symbol.split('\t').map(str::trim).filter(|f| !f.is_empty());
    let address = fields.next().filter(|a| a.starts_with("0x"))?;
    let Some(function) = fields.next() else {
        return Some(address.to_string());
    };
    let name = match function.rsplit_once('+') {
        Some((name, offset)) if offset.starts_with("0x") => name,
        _ => function,
    };
    Some(name.to_string())
}

/// Adds a record's bytes, scaled, to its stack (root first).
fn add(stacks: &mut Folded, record: Record, rate: u64) {
    let bytes = scaled_bytes(record.alloc_objects, record.alloc_bytes, rate).round() as u64;
    if bytes == 0 {
        return;
    }
    let leaf_first = if record.frames.is_empty() {
        record.addresses
    } else {
        record.frames
    };
    let stack: Vec<String> = leaf_first.into_iter().rev().collect();
    let stack = if stack.is_empty() {
        NO_STACK.to_string()
    } else {
        stack.join(";")
    };
    *stacks.0.entry(stack).or_insert(0) += bytes;
}

/// The bytes a sampled record stands for: an allocation of `s` bytes is sampled with
/// probability 1 − e^(−s/rate), so each is divided by that (pprof's `scaleHeapSample`, with
/// the record's mean size). A rate of 1 samples every allocation.
fn scaled_bytes(objects: u64, bytes: u64, rate: u64) -> f64 {
    if objects == 0 || bytes == 0 {
        return 0.0;
    }
    if rate <= 1 {
        return bytes as f64;
    }
    let mean = bytes as f64 / objects as f64;
    bytes as f64 / -(-mean / rate as f64).exp_m1()
}

/// A line cut short for a message.
fn clip(line: &str) -> String {
    line.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "\
# HELP go_memstats_alloc_bytes Number of bytes allocated and still in use.
# TYPE go_memstats_alloc_bytes gauge
go_memstats_alloc_bytes 2.1e+06
# HELP go_memstats_alloc_bytes_total Total number of bytes allocated, even if freed.
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 1.2345e+08
go_memstats_frees_total{job=\"a}b\",instance=\"x\\\"y\"} 987654
go_memstats_heap_alloc_bytes 2.1e+06
go_memstats_mallocs_total 1.000123e+06
go_memstats_mallocs_total_extra 5
";

    #[test]
    fn the_counters_are_read_in_any_notation_with_or_without_labels() {
        let r = counters(PAGE, "http://x/metrics").unwrap();
        assert_eq!(r.allocs, 1_000_123.0);
        assert_eq!(r.bytes, 123_450_000.0);
        assert_eq!(r.frees, Some(987_654.0));
        assert_eq!(r.live_heap_bytes, Some(2_100_000.0));
        assert_eq!(r.stacks, None);
    }

    #[test]
    fn missing_or_doubled_counters_are_named() {
        let page = "go_memstats_alloc_bytes_total 5\ngo_goroutines 7\n";
        let err = counters(page, "http://x/metrics").unwrap_err();
        assert!(err.contains("http://x/metrics"), "{err}");
        assert!(err.contains(MALLOCS) && err.contains(FREES), "{err}");
        assert!(!err.contains(ALLOC_BYTES), "{err}");
        let twice = format!("{PAGE}go_memstats_frees_total{{job=\"b\"}} 1\n");
        assert!(counters(&twice, "u")
            .unwrap_err()
            .contains("more than once"));
        let bad = "go_memstats_mallocs_total NaN\n";
        assert!(counters(bad, "u").unwrap_err().contains("not a count"));
    }

    /// As `runtime/pprof` writes it: tab-aligned symbols, a runtime frame hidden at the leaf,
    /// an inlined frame, a frame with no name, and the MemStats section after.
    const PROFILE: &str = "heap profile: 3: 6144 [5: 10240] @ heap/1048576
1: 2048 [4: 8192] @ 0x4a1 0x4b2 0x4c3
#\t0x4a1\tmain.handle+0x21\t\t/src/main.go:10
#\t0x4a1\tmain.inlined+0x0\t\t/src/main.go:20
#\t0x4b2\tnet/http.(*conn).serve+0x6ff\t/go/net/http/server.go:2009

2: 4096 [1: 2048] @ 0x4d4 0x4c3
#\t0x4d4
#\t0x4c3\tnet/http.(*conn).serve+0x6ff\t/go/net/http/server.go:2009

0: 0 [0: 0] @ 0x4e5
#\t0x4e5\tmain.idle+0x1\t/src/main.go:30

1: 288 [2: 296] @

1: 512 [1: 1024] @ 0x4a1 0x4b2 0x4c3
#\t0x4a1\tmain.handle+0x40\t\t/src/main.go:11
#\t0x4a1\tmain.inlined+0x0\t\t/src/main.go:20
#\t0x4b2\tnet/http.(*conn).serve+0x6ff\t/go/net/http/server.go:2009


# runtime.MemStats
# Alloc = 2100000
# TotalAlloc = 123450000
";

    #[test]
    fn a_heap_profile_folds_root_first_and_scales_as_pprof_does() {
        let p = heap_profile(PROFILE).unwrap();
        assert_eq!(p.rate_bytes, 524_288);
        // Mean 2,048 bytes at rate 524,288: 1 − e^(−1/256) = 0.0038986305 by hand, a scale of
        // 256.50033, so 8,192 bytes stand for 2,101,251. Mean 1,024: a scale of 512.50016, so
        // 1,024 bytes stand for 524,800. The two records share a stack once folded.
        let handle = "net/http.(*conn).serve;main.inlined;main.handle";
        let got = p.stacks.0[handle];
        assert!((2_101_251 + 524_800 - got as i64).abs() <= 1, "{got}");
        // Mean 2,048 again: 2,048 × 256.50033 = 525,313.
        let unnamed = p.stacks.0["net/http.(*conn).serve;0x4d4"];
        assert!((525_313 - unnamed as i64).abs() <= 1, "{unnamed}");
        // Mean 148: a scale of 3,542.99, so 296 bytes stand for 1,048,724.
        let none = p.stacks.0[NO_STACK];
        assert!((1_048_724 - none as i64).abs() <= 1, "{none}");
        assert_eq!(p.stacks.0.len(), 3, "{:?}", p.stacks);
    }

    #[test]
    fn the_rate_comes_from_the_header() {
        assert_eq!(header_rate("heap profile: 1: 2 [3: 4] @ heap/2"), Some(1));
        assert_eq!(
            header_rate("heap profile: 1: 2 [3: 4] @ heap_v2/4096"),
            Some(4096)
        );
        assert_eq!(scaled_bytes(3, 300, 1), 300.0);
        let off = heap_profile("heap profile: 0: 0 [0: 0] @ heap/0\n").unwrap_err();
        assert!(off.contains("MemProfileRate is 0"), "{off}");
        let other = heap_profile("goroutine profile: total 4\n").unwrap_err();
        assert!(other.contains("not a Go heap profile"), "{other}");
        let broken = heap_profile("heap profile: 1: 2 [3: 4] @ heap/2\n1: x [3: 4] @ 0x1\n");
        assert!(broken.unwrap_err().contains("does not parse"));
    }

    /// Serves `PAGE` chunked at `/metrics` (as Go's server writes a page it streams) and 404
    /// elsewhere, to each connection until the test ends.
    fn serve_metrics() -> std::net::SocketAddr {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).unwrap_or(0);
                let answer = if buf[..n].starts_with(b"GET /metrics ") {
                    let (a, b) = PAGE.split_at(100);
                    format!(
                        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
                         {:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                        a.len(),
                        b.len()
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n".to_string()
                };
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        addr
    }

    #[test]
    fn a_profile_that_fails_leaves_the_counters_standing() {
        let addr = serve_metrics();
        let parse = |url: String| crate::wire::target::parse_target(&url).unwrap();
        let metrics = parse(format!("http://{addr}/metrics"));
        let pprof = parse(format!("http://{addr}/debug/pprof"));
        let got = read(&metrics, Some(&pprof), false).unwrap();
        assert_eq!(got.reading.allocs, 1_000_123.0);
        assert_eq!(got.reading.stacks, None);
        assert_eq!(got.profile_rate_bytes, None);
        assert_eq!(got.problems.len(), 1);
        let why = &got.problems[0];
        assert!(
            why.contains("/debug/pprof/allocs?debug=1") && why.contains("404"),
            "{why}"
        );
        let elsewhere = parse(format!("http://{addr}/other"));
        let err = read(&elsewhere, None, true).unwrap_err();
        assert!(err.contains("/other") && err.contains("404"), "{err}");
    }

    #[test]
    fn the_profile_path_is_under_the_base() {
        assert_eq!(profile_path("/debug/pprof"), "/debug/pprof/allocs?debug=1");
        assert_eq!(profile_path("/debug/pprof/"), "/debug/pprof/allocs?debug=1");
        assert_eq!(
            profile_path("/debug/pprof/heap"),
            "/debug/pprof/allocs?debug=1"
        );
        assert_eq!(
            profile_path("/debug/pprof/allocs?x=1"),
            "/debug/pprof/allocs?debug=1"
        );
    }
}
