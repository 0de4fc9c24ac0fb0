//! The mock's own HTTP/1.1 server against hyper's (`--http1 hyper`): the same answers, requests
//! in a row on one write, the hand-over of what it does not take, and its timeouts. (Half-close,
//! slow bodies and the connection cap are in `hostile`, which runs against the own server.)

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gatebench_tests::start_mock;
use mock_upstream::{Config, Http1Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CHAT: &str =
    r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"max_tokens":5}"#;
const STREAM: &str = r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"stream":true}"#;
const STREAM_USAGE: &str = r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}"#;
const RESPONSES_STREAM: &str =
    r#"{"model":"gpt-4o-mini","input":"Hi","max_output_tokens":16,"stream":true}"#;
const COMPLETIONS_STREAM: &str =
    r#"{"model":"gpt-3.5-turbo-instruct","prompt":"Hi","max_tokens":3,"stream":true}"#;
const GEMINI: &str = r#"{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"maxOutputTokens":3}}"#;
const BEDROCK: &str =
    r#"{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"inferenceConfig":{"maxTokens":3}}"#;
const MESSAGE: &str = r#"{"model":"claude-x","max_tokens":4,"messages":[{"role":"user","content":"Hi"}],"stream":true}"#;

fn post(path: &str, body: &str, extra: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n{extra}\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Reads one whole answer from `tcp`, into `pending` first: its head and its body (by
/// `content-length`, or chunked up to the last chunk). Leaves what follows in `pending`.
async fn read_answer(tcp: &mut TcpStream, pending: &mut Vec<u8>) -> (String, Vec<u8>) {
    read_answer_to(tcp, pending, false).await
}

/// [`read_answer`]; `head_only` for the answer to `HEAD`, which has a length but no body.
async fn read_answer_to(
    tcp: &mut TcpStream,
    pending: &mut Vec<u8>,
    head_only: bool,
) -> (String, Vec<u8>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(end) = find(pending, b"\r\n\r\n") {
            let head = String::from_utf8(pending[..end + 4].to_vec()).unwrap();
            let lower = head.to_ascii_lowercase();
            let body_end = if head_only {
                Some(end + 4)
            } else if let Some(at) = lower.find("content-length: ") {
                let n: usize = lower[at + 16..]
                    .split("\r\n")
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                (pending.len() >= end + 4 + n).then_some(end + 4 + n)
            } else if lower.contains("transfer-encoding: chunked") {
                find(&pending[end + 4..], b"\r\n0\r\n\r\n").map(|at| end + 4 + at + 7)
            } else {
                Some(end + 4)
            };
            if let Some(body_end) = body_end {
                let body = pending[end + 4..body_end].to_vec();
                pending.drain(..body_end);
                return (head, body);
            }
        }
        let mut buf = [0u8; 16384];
        let n = tokio::time::timeout_at(deadline.into(), tcp.read(&mut buf))
            .await
            .expect("answer within 10 s")
            .unwrap();
        assert!(
            n > 0,
            "closed mid-answer: {:?}",
            String::from_utf8_lossy(pending)
        );
        pending.extend_from_slice(&buf[..n]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The data of a chunked body, without its framing.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    loop {
        let end = find(body, b"\r\n").expect("a chunk-size line");
        let size = std::str::from_utf8(&body[..end]).unwrap();
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            return data;
        }
        data.extend_from_slice(&body[end + 2..end + 2 + size]);
        assert_eq!(&body[end + 2 + size..end + 4 + size], b"\r\n");
        body = &body[end + 4 + size..];
    }
}

/// The head's lines but `date`, sorted (the servers write the same headers, not always in the
/// same order).
fn head_lines(head: &str) -> Vec<String> {
    let mut lines: Vec<String> = head
        .split("\r\n")
        .filter(|l| !l.is_empty() && !l.to_ascii_lowercase().starts_with("date:"))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn mock(server: Http1Server) -> mock_upstream::MockServer {
    start_mock(Config {
        http1: server,
        ..Config::default()
    })
}

async fn exchange(addr: SocketAddr, request: &str) -> (Vec<String>, Vec<u8>) {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request.as_bytes()).await.unwrap();
    let head_only = request.starts_with("HEAD ");
    let (head, body) = read_answer_to(&mut tcp, &mut Vec::new(), head_only).await;
    (head_lines(&head), body)
}

#[tokio::test]
async fn both_servers_give_the_same_answers() {
    let own = mock(Http1Server::Own);
    let hyper = mock(Http1Server::Hyper);
    let requests = [
        post("/v1/chat/completions", CHAT, ""),
        post("/v1/chat/completions", STREAM, ""),
        post("/v1/chat/completions", CHAT, "x-mock-status: 429\r\n"),
        post("/v1/chat/completions", CHAT, "x-mock-latency: 2ms\r\n"),
        post("/v1/messages", MESSAGE, "anthropic-version: 2023-06-01\r\n"),
        // Every API's stream, each event a chunk of its own, and two mid-stream faults.
        post("/v1/chat/completions", STREAM_USAGE, ""),
        post("/v1/chat/completions", STREAM, "x-mock-fault: error@2\r\n"),
        post(
            "/v1/chat/completions",
            STREAM,
            "x-mock-fault: truncate@2\r\n",
        ),
        post("/v1/responses", RESPONSES_STREAM, ""),
        post(
            "/v1/responses",
            RESPONSES_STREAM,
            "x-mock-fault: error@2\r\n",
        ),
        // Events that fall due one by one: each waits, then leaves behind the ones before.
        post(
            "/v1/chat/completions",
            STREAM,
            "x-mock-ttft: 2ms\r\nx-mock-itl: 1ms\r\n",
        ),
        post("/v1/completions", COMPLETIONS_STREAM, ""),
        post(
            "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
            GEMINI,
            "",
        ),
        post(
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
            BEDROCK,
            "",
        ),
        post(
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
            BEDROCK,
            "x-mock-fault: error@2\r\n",
        ),
        post(
            "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21",
            STREAM,
            "",
        ),
        post("/v1/chat/completions", "{not json", ""),
        post(
            "/v1/embeddings",
            r#"{"model":"e","input":"hi","dimensions":4}"#,
            "",
        ),
        post("/v1/chat/completions", CHAT, "connection: close\r\n"),
        "GET /v1/models HTTP/1.1\r\nhost: m\r\n\r\n".to_string(),
        "GET /nowhere HTTP/1.1\r\nhost: m\r\n\r\n".to_string(),
        "HEAD /health HTTP/1.1\r\nhost: m\r\n\r\n".to_string(),
        "DELETE /v1/chat/completions HTTP/1.1\r\nhost: m\r\n\r\n".to_string(),
    ];
    for request in &requests {
        let a = exchange(own.local_addr(), request).await;
        let b = exchange(hyper.local_addr(), request).await;
        assert_eq!(a.0, b.0, "heads differ for {request:?}");
        if request.contains("\"stream\":true") {
            assert!(
                a.0.iter().any(|line| line.starts_with("HTTP/1.1 200 ")),
                "{request:?} answered {:?}",
                a.0
            );
        }
        // hyper's path sends the Responses API's last event, of more pieces than one frame
        // holds, as two chunks; the own server as one. The bytes they carry are the same.
        let (a, b) = if request.starts_with("POST /v1/responses") {
            (dechunk(&a.1), dechunk(&b.1))
        } else {
            (a.1, b.1)
        };
        assert_eq!(
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b),
            "bodies differ for {request:?}"
        );
    }
}

#[tokio::test]
async fn requests_sent_in_one_write_are_answered_in_order() {
    let own = mock(Http1Server::Own);
    let mut tcp = TcpStream::connect(own.local_addr()).await.unwrap();
    let all = format!(
        "GET /health HTTP/1.1\r\nhost: m\r\n\r\n{}{}GET /v1/models HTTP/1.1\r\nhost: m\r\n\r\n",
        post("/v1/chat/completions", CHAT, ""),
        post("/v1/chat/completions", STREAM, ""),
    );
    tcp.write_all(all.as_bytes()).await.unwrap();
    let mut pending = Vec::new();
    let (_, health) = read_answer(&mut tcp, &mut pending).await;
    assert_eq!(health, br#"{"status":"ok"}"#);
    let (_, chat) = read_answer(&mut tcp, &mut pending).await;
    assert!(String::from_utf8_lossy(&chat).contains("chat.completion"));
    let (head, stream) = read_answer(&mut tcp, &mut pending).await;
    assert!(head.contains("transfer-encoding: chunked"));
    assert!(String::from_utf8_lossy(&stream).contains("data: [DONE]"));
    let (_, models) = read_answer(&mut tcp, &mut pending).await;
    assert!(String::from_utf8_lossy(&models).contains("gpt-4o-mini"));
    assert!(pending.is_empty());
}

#[tokio::test]
async fn what_the_own_server_does_not_take_hyper_answers_on_the_same_connection() {
    let own = mock(Http1Server::Own);
    let mut tcp = TcpStream::connect(own.local_addr()).await.unwrap();
    let mut pending = Vec::new();
    tcp.write_all(post("/v1/chat/completions", CHAT, "").as_bytes())
        .await
        .unwrap();
    let (head, _) = read_answer(&mut tcp, &mut pending).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // A chunked body: hyper's from here on.
    let chunked = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\ntransfer-encoding: chunked\r\n\r\n\
         {:x}\r\n{CHAT}\r\n0\r\n\r\n",
        CHAT.len()
    );
    tcp.write_all(chunked.as_bytes()).await.unwrap();
    let (head, body) = read_answer(&mut tcp, &mut pending).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(String::from_utf8_lossy(&body).contains("chat.completion"));
    tcp.write_all(post("/v1/chat/completions", STREAM, "").as_bytes())
        .await
        .unwrap();
    let (_, body) = read_answer(&mut tcp, &mut pending).await;
    assert!(String::from_utf8_lossy(&body).contains("[DONE]"));

    // HTTP/1.0, and a body that waits for 100-continue.
    let (head, _) = exchange(own.local_addr(), "GET /health HTTP/1.0\r\n\r\n").await;
    assert!(
        head.iter().any(|l| l.starts_with("HTTP/1.0 200")),
        "{head:?}"
    );
    let mut tcp = TcpStream::connect(own.local_addr()).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\nexpect: 100-continue\r\n\
         content-length: {}\r\n\r\n",
        CHAT.len()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 100 Continue"));
    tcp.write_all(CHAT.as_bytes()).await.unwrap();
    let (head, _) = read_answer(&mut tcp, &mut Vec::new()).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    // A head that does not parse gets hyper's 400.
    let (head, _) = exchange(
        own.local_addr(),
        "GET /health HTTP/1.1\r\nbad header\r\n\r\n",
    )
    .await;
    assert!(
        head.iter().any(|l| l.starts_with("HTTP/1.1 400")),
        "{head:?}"
    );
}

#[tokio::test]
async fn a_busy_connection_outlives_the_header_timeout_and_an_idle_one_does_not() {
    let own = start_mock(Config {
        header_timeout: Duration::from_secs(1),
        ..Config::default()
    });
    let mut tcp = TcpStream::connect(own.local_addr()).await.unwrap();
    let mut pending = Vec::new();
    let started = Instant::now();
    // Requests 100 ms apart for over three times the timeout: the timer, armed once, must move
    // on with every request instead of firing at the first deadline (a client held up for the
    // 900 ms left of it is no host's).
    let mut last_answer = Instant::now();
    while started.elapsed() < Duration::from_millis(3_500) {
        tcp.write_all(b"GET /health HTTP/1.1\r\nhost: m\r\n\r\n")
            .await
            .unwrap();
        let (head, _) = read_answer(&mut tcp, &mut pending).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        last_answer = Instant::now();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Then idle: closed about 1 s after the last answer (its timer is armed when the mock sent
    // it, a little before it was read here).
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
        .await
        .expect("closed within 5 s")
        .unwrap_or(0);
    assert_eq!(n, 0);
    let waited = last_answer.elapsed();
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}
