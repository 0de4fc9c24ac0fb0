//! Heap allocations per request, counted by a global allocator, for the mock and for the
//! smallest hyper server (`examples/hyper_hello.rs`) under the same client, asserted against
//! hyper's own floor measured in the same run, so the figure in BENCHMARKS.md cannot rot.
//!
//! The client is a blocking socket with one preallocated buffer, so after warm-up every
//! allocation counted comes from the server. Connections are kept alive: per-connection set-up
//! is excluded, as it is for a benchmark's pre-opened connections. This binary holds one test,
//! so nothing else runs while it counts.
//!
//! Run (prints the table): cargo test --release -p mock-upstream --test alloc -- --nocapture

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use bytes::Bytes;
use gatebench_shared::LatencyModel;
use mock_upstream::{Config, MockServer};

#[path = "../examples/hyper_hello.rs"]
mod hyper_hello;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call forwards to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const WARMUP: u64 = 200;

/// A keep-alive client that reads each response completely into one reused buffer.
struct RawClient {
    tcp: TcpStream,
    buf: Vec<u8>,
}

impl RawClient {
    fn connect(addr: SocketAddr) -> RawClient {
        let tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_nodelay(true).expect("nodelay");
        RawClient {
            tcp,
            buf: vec![0; 1 << 20],
        }
    }

    /// Sends `request` and reads until the response is complete (content-length or chunked).
    fn round_trip(&mut self, request: &[u8]) {
        self.tcp.write_all(request).expect("write");
        let mut filled = 0;
        loop {
            let n = self.tcp.read(&mut self.buf[filled..]).expect("read");
            assert!(n > 0, "server closed the connection");
            filled += n;
            if complete(&self.buf[..filled]) {
                return;
            }
        }
    }
}

fn complete(response: &[u8]) -> bool {
    let Some(head_end) = find(response, b"\r\n\r\n") else {
        return false;
    };
    let head = &response[..head_end];
    if let Some(at) = find(head, b"content-length: ") {
        let digits = &head[at + 16..];
        let len = digits
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .fold(0usize, |acc, d| acc * 10 + usize::from(d - b'0'));
        return response.len() >= head_end + 4 + len;
    }
    response.ends_with(b"\r\n0\r\n\r\n")
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Allocations per request for `request`, over `n` requests after warm-up.
fn per_request(addr: SocketAddr, request: &[u8], n: u64) -> f64 {
    let mut client = RawClient::connect(addr);
    for _ in 0..WARMUP {
        client.round_trip(request);
    }
    let before = ALLOCATIONS.load(Relaxed);
    for _ in 0..n {
        client.round_trip(request);
    }
    (ALLOCATIONS.load(Relaxed) - before) as f64 / n as f64
}

fn chat_request(extra: &str) -> Vec<u8> {
    chat_request_with("", extra)
}

/// A chat request with `header` lines (each ending in CRLF) besides the usual ones.
fn chat_request_with(header: &str, extra: &str) -> Vec<u8> {
    let body = format!(
        r#"{{"model":"gpt-4o-mini","messages":[{{"role":"user","content":"Say hello."}}]{extra}}}"#
    );
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n\
         {header}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn messages_request(extra: &str) -> Vec<u8> {
    let body = format!(
        r#"{{"model":"claude-3-5-haiku-latest","max_tokens":16,"messages":[{{"role":"user","content":"Say hello."}}]{extra}}}"#
    );
    format!(
        "POST /v1/messages HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n\
         anthropic-version: 2023-06-01\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn start_mock(latency: LatencyModel) -> MockServer {
    MockServer::start(Config {
        latency,
        ..Config::loopback()
    })
    .expect("mock starts")
}

fn start_hello() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let _ = hyper_hello::serve_hello(listener, Bytes::from_static(b"Hello, world!")).await;
        });
    });
    addr
}

/// Counting noise allowed: a stray allocation by the runtime during a measured window.
const NOISE: f64 = 0.05;

#[test]
fn allocations_per_request_stay_at_hypers_floor() {
    let n = 20_000;
    let hello = start_hello();
    let hello_get = b"GET / HTTP/1.1\r\nhost: hello\r\n\r\n";
    let hello_post = chat_request("");

    let instant = start_mock(LatencyModel {
        tokens: "256".parse().expect("tokens"),
        ..LatencyModel::default()
    });
    let addr = instant.local_addr();
    let chat = chat_request(r#","max_tokens":16"#);
    let stream_16 = chat_request(r#","max_tokens":16,"stream":true"#);
    let stream_256 = chat_request(r#","max_tokens":256,"stream":true"#);
    let usage_16 =
        chat_request(r#","max_tokens":16,"stream":true,"stream_options":{"include_usage":true}"#);

    let timed = start_mock(LatencyModel {
        ttft: "1ms".parse().expect("ttft"),
        itl: "1ms".parse().expect("itl"),
        tokens: "16".parse().expect("tokens"),
        ..LatencyModel::default()
    });

    let rows = [
        ("hyper hello world, GET", per_request(hello, hello_get, n)),
        (
            "hyper hello world, POST chat body",
            per_request(hello, &hello_post, n),
        ),
        (
            "mock chat completion (16 tokens)",
            per_request(addr, &chat, n),
        ),
        (
            "mock stream, 16 tokens",
            per_request(addr, &stream_16, n / 4),
        ),
        (
            "mock stream, 16 tokens + usage",
            per_request(addr, &usage_16, n / 4),
        ),
        (
            "mock stream, 256 tokens",
            per_request(addr, &stream_256, n / 20),
        ),
        (
            "mock stream, 16 tokens, 1 ms ttft and itl",
            per_request(timed.local_addr(), &stream_16, 100),
        ),
        (
            "mock anthropic message (16 tokens)",
            per_request(addr, &messages_request(""), n),
        ),
        (
            "mock anthropic stream, 16 tokens",
            per_request(addr, &messages_request(r#","stream":true"#), n / 4),
        ),
    ];
    println!("allocations per request (keep-alive, after {WARMUP} warm-up requests)");
    for (name, allocs) in rows {
        println!("  {name:<44} {allocs:>6.2}");
    }
    let per_frame = (rows[5].1 - rows[3].1) / 240.0;
    println!(
        "  {:<44} {per_frame:>6.3}",
        "mock stream, per extra streamed token"
    );

    // hyper's own floor for a POST with a body: what the smallest server pays per request.
    let floor = rows[1].1;
    for (name, allocs) in &rows[2..7] {
        assert!(
            *allocs <= floor + NOISE,
            "{name}: {allocs:.2} allocations per request, over hyper's floor {floor:.2}"
        );
    }
    // An Anthropic request carries one more header (`anthropic-version`), which takes one more
    // allocation in hyper's request header map.
    for (name, allocs) in &rows[7..] {
        assert!(
            *allocs <= floor + 1.0 + NOISE,
            "{name}: {allocs:.2} allocations per request"
        );
    }
    assert!(
        per_frame.abs() <= 0.01,
        "each streamed token allocates ({per_frame:.3} per token)"
    );
    // The precise timer queues a waiter without allocating.
    assert!(
        rows[6].1 <= rows[3].1 + NOISE,
        "a timed stream allocates more ({:.2}) than an instant one ({:.2})",
        rows[6].1,
        rows[3].1
    );

    // --name and --record add nothing: the name is encoded once, the seq echoed by sharing
    // its bytes, the record a ring allocated at start-up.
    let named = MockServer::start(Config {
        name: Some("upstream-a".into()),
        record: 1000,
        ..Config::loopback()
    })
    .expect("mock starts");
    let seq = chat_request_with(
        "x-gatebench-seq: 7\r\nauthorization: Bearer sk-a\r\n",
        r#","max_tokens":16,"user":"u-1""#,
    );
    let plain = per_request(addr, &seq, n);
    let recorded = per_request(named.local_addr(), &seq, n);
    println!(
        "  {:<44} {plain:>6.2}",
        "mock chat with x-gatebench-seq and a key"
    );
    println!(
        "  {:<44} {recorded:>6.2}",
        "  the same with --name and --record 1000"
    );
    assert!(
        recorded <= plain + NOISE,
        "--name and --record allocate: {recorded:.2} against {plain:.2} per request"
    );
}
