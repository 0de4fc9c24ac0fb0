//! Starting, timing out idle clients, and shutting down gracefully.

use std::time::{Duration, Instant};

use gatebench_shared::LatencyModel;
use gatebench_tests::{chat_body, start_mock, Client};
use mock_upstream::Config;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn slow_stream(itl: &str, tokens: &str, grace: Duration) -> Config {
    Config {
        latency: LatencyModel {
            itl: itl.parse().unwrap(),
            tokens: tokens.parse().unwrap(),
            ..LatencyModel::default()
        },
        shutdown_grace: grace,
        ..Config::default()
    }
}

/// Waits until a stream is open, then shuts the mock down while it runs; returns when the
/// shutdown began.
async fn shutdown_once_streaming(mock: mock_upstream::MockServer) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(5);
    while mock.metrics().streams_open() == 0 {
        assert!(Instant::now() < deadline, "stream never opened");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = Instant::now();
    tokio::task::spawn_blocking(move || mock.shutdown())
        .await
        .unwrap();
    started
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_in_flight_streams_finish_and_refuses_new_connections() {
    let mock = start_mock(slow_stream("20ms", "20", Duration::from_secs(10)));
    let addr = mock.local_addr();
    let stream = tokio::spawn(async move {
        let mut client = Client::connect(addr).await;
        client.chat(&chat_body(true, json!({})), &[]).await
    });
    let started = shutdown_once_streaming(mock).await;
    let r = stream.await.unwrap();
    assert!(r.text().ends_with("data: [DONE]\n\n"), "stream was cut");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_grace_bounds_a_stream_that_would_run_long() {
    let mock = start_mock(slow_stream("1s", "60", Duration::from_millis(300)));
    let addr = mock.local_addr();
    let stream = tokio::spawn(async move {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let body = serde_json::to_vec(&chat_body(true, json!({}))).unwrap();
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(&body).await.unwrap();
        let mut all = Vec::new();
        let _ = tcp.read_to_end(&mut all).await;
        all
    });
    let started = shutdown_once_streaming(mock).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let all = tokio::time::timeout(Duration::from_secs(5), stream)
        .await
        .expect("client sees the connection end")
        .unwrap();
    assert!(!String::from_utf8_lossy(&all).contains("[DONE]"));
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let mock = start_mock(Config {
        header_timeout: Duration::from_millis(300),
        ..Config::default()
    });
    let mut tcp = tokio::net::TcpStream::connect(mock.local_addr())
        .await
        .unwrap();
    tcp.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut buf)).await;
    assert!(
        read.is_ok(),
        "connection still open after the header timeout"
    );
    // Other clients are unaffected.
    let mut client = Client::connect(mock.local_addr()).await;
    assert_eq!(
        client.chat(&chat_body(false, json!({})), &[]).await.status,
        200
    );
}
