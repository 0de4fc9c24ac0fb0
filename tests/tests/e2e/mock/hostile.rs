//! The mock against clients that misbehave: slow or lying bodies, pipelining, half-closes,
//! clients that never read, and more connections than it may serve. Each case bounds what the
//! client can hold, answers with the right status, and leaves other clients unaffected.

use std::time::Duration;

use gatebench_tests::{chat_body, start_mock, Client};
use mock_upstream::{Config, MockServer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Everything the server sends until it closes, or what came within `limit`.
async fn read_until_closed(tcp: &mut TcpStream, limit: Duration) -> (String, bool) {
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(limit, tcp.read_to_end(&mut buf))
        .await
        .is_ok();
    (String::from_utf8_lossy(&buf).into_owned(), closed)
}

/// Another client still gets a completion.
async fn others_are_served(mock: &MockServer) {
    let mut client = Client::connect(mock.local_addr()).await;
    let answer = client.chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(answer.status, 200);
}

fn chat_request(extra_headers: &str, body: &str, declared: usize) -> String {
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\ncontent-type: application/json\r\n\
         content-length: {declared}\r\n{extra_headers}\r\n{body}"
    )
}

const CHAT: &str = r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}"#;

#[tokio::test]
async fn a_body_slower_than_the_body_timeout_gets_408_and_the_connection_closes() {
    let mock = start_mock(Config {
        body_timeout: Duration::from_millis(300),
        ..Config::default()
    });
    let mut tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    // Declares the whole body but sends only its first ten bytes, and then nothing.
    let request = chat_request("", CHAT, CHAT.len());
    let cut = request.len() - CHAT.len() + 10;
    tcp.write_all(&request.as_bytes()[..cut]).await.unwrap();
    let (answer, closed) = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(closed, "still open after the body timeout: {answer}");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"request_timeout\""), "{answer}");
    others_are_served(&mock).await;
}

#[tokio::test]
async fn bytes_past_the_declared_length_are_not_taken_for_a_second_request() {
    let mock = start_mock(Config::default());
    let mut tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    // The length covers the JSON; what follows is not HTTP.
    let request = chat_request("", &format!("{CHAT}\x00\x01garbage\r\n\r\n"), CHAT.len());
    tcp.write_all(request.as_bytes()).await.unwrap();
    let (answer, closed) = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(closed, "{answer}");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The first request was answered whole; the garbage got a 400 and the close.
    assert!(answer.contains("chat.completion"), "{answer}");
    assert!(answer.contains("HTTP/1.1 400"), "{answer}");
    others_are_served(&mock).await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let mock = start_mock(Config::default());
    let mut tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    let pipeline = format!(
        "{}GET /v1/models HTTP/1.1\r\nhost: m\r\n\r\n{}",
        chat_request("", CHAT, CHAT.len()),
        "GET /health HTTP/1.1\r\nhost: m\r\nconnection: close\r\n\r\n"
    );
    tcp.write_all(pipeline.as_bytes()).await.unwrap();
    let (answer, closed) = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(closed, "{answer}");
    assert_eq!(answer.matches("HTTP/1.1 200").count(), 3, "{answer}");
    let chat = answer.find("chat.completion").unwrap();
    let models = answer.find("\"object\":\"list\"").unwrap();
    let health = answer.rfind("HTTP/1.1 200").unwrap();
    assert!(chat < models && models < health, "{answer}");
}

#[tokio::test]
async fn a_client_that_half_closes_after_its_request_still_gets_the_answer() {
    // The answer takes 200 ms, long after the client's FIN arrived.
    let mock = start_mock(Config::default());
    let mut tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
    let request = chat_request("x-mock-latency: 200ms\r\n", CHAT, CHAT.len());
    tcp.write_all(request.as_bytes()).await.unwrap();
    tcp.shutdown().await.unwrap();
    let (answer, closed) = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(closed, "{answer}");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("chat.completion"), "{answer}");
}

#[tokio::test]
async fn a_client_that_never_reads_its_stream_is_dropped_after_the_send_timeout() {
    let mock = start_mock(Config {
        send_timeout: Duration::from_secs(1),
        ..Config::default()
    });
    // A small receive window fills at once; the stream is far larger than both sides' buffers.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(&mock.local_addr().into()).unwrap();
    socket.set_nonblocking(true).unwrap();
    let mut tcp = TcpStream::from_std(socket.into()).unwrap();
    let body =
        r#"{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let request = chat_request("x-mock-tokens: 1000000\r\n", body, body.len());
    tcp.write_all(request.as_bytes()).await.unwrap();
    // Never read. While the mock waits on this client, others are served.
    others_are_served(&mock).await;
    let dropped = tokio::time::timeout(Duration::from_secs(60), async {
        while mock.metrics().connections_open() > 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        dropped.is_ok(),
        "the connection of a client that never reads is still open"
    );
    // What the client can still read ends in a reset or a close, not with the whole stream.
    let (answer, _) = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
    assert!(!answer.contains("[DONE]"));
}

#[tokio::test]
async fn connections_past_the_cap_get_503_in_the_provider_shape() {
    let mock = start_mock(Config {
        max_connections: Some(2),
        ..Config::default()
    });
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut client = Client::connect(mock.local_addr()).await;
        let answer = client.chat(&chat_body(false, json!({})), &[]).await;
        assert_eq!(answer.status, 200);
        held.push(client);
    }
    // A third connection: OpenAI's shape on chat, Anthropic's on messages; each closes.
    for (path, shape) in [
        ("/v1/chat/completions", "\"type\":\"server_error\""),
        ("/v1/messages", "\"type\":\"overloaded_error\""),
    ] {
        let mut tcp = TcpStream::connect(mock.local_addr()).await.unwrap();
        let request = chat_request("", CHAT, CHAT.len()).replace("/v1/chat/completions", path);
        tcp.write_all(request.as_bytes()).await.unwrap();
        let (answer, closed) = read_until_closed(&mut tcp, Duration::from_secs(10)).await;
        assert!(closed, "{answer}");
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains(shape), "{answer}");
        assert!(answer.contains("retry-after: 1"), "{answer}");
    }
    // The held connections still work; once one goes, a new one is served.
    let answer = held[0].chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(answer.status, 200);
    held.pop();
    let freed = tokio::time::timeout(Duration::from_secs(10), async {
        while mock.metrics().connections_open() > 1 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(freed.is_ok());
    others_are_served(&mock).await;
    let metrics = mock.metrics().to_prometheus();
    assert!(metrics.contains("mock_over_capacity_total 2"), "{metrics}");
}
