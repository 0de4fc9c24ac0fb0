//! Faults on purpose: forced by `x-mock-*` headers or drawn at configured rates, each in the
//! route's provider shape with the provider's retry headers, counted on /metrics.

use std::time::Duration;

use gatebench_tests::{chat_body, start_mock, Client};
use hyper::Method;
use mock_upstream::{Api, Config, FaultKind, FaultRates, StreamFaultKind};
use serde_json::json;

#[tokio::test]
async fn forced_statuses_take_each_providers_shape() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client
        .chat(&chat_body(false, json!({})), &[("x-mock-status", "429")])
        .await;
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"]["code"], "rate_limit_exceeded");
    assert_eq!(r.headers["retry-after-ms"], "1000");
    assert_eq!(r.headers["retry-after"], "1");
    assert_eq!(r.headers["x-should-retry"], "true");
    assert_eq!(r.headers["x-ratelimit-remaining-requests"], "0");

    let r = client
        .chat(&chat_body(true, json!({})), &[("x-mock-status", "503")])
        .await;
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["error"]["type"], "server_error");

    let body = serde_json::to_vec(&json!({
        "model": "claude-x", "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}]
    }))
    .unwrap();
    for (status, kind) in [("529", "overloaded_error"), ("429", "rate_limit_error")] {
        let r = client
            .send(
                Method::POST,
                "/v1/messages",
                &[
                    ("anthropic-version", "2023-06-01"),
                    ("x-mock-status", status),
                ],
                &body,
            )
            .await;
        assert_eq!(r.status.as_str(), status);
        let e = r.json();
        assert_eq!(
            (e["type"].as_str(), e["error"]["type"].as_str()),
            (Some("error"), Some(kind))
        );
        assert_eq!(r.headers["x-should-retry"], "true");
    }
    let r = client
        .chat(&chat_body(false, json!({})), &[("x-mock-status", "ok")])
        .await;
    assert_eq!(r.status, 400, "a bad x-mock header is the client's error");
}

#[tokio::test]
async fn headers_override_the_latency_model_for_one_request() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client
        .chat(
            &chat_body(true, json!({})),
            &[("x-mock-ttft", "80ms"), ("x-mock-tokens", "3")],
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.frames[0].0 >= Duration::from_millis(80),
        "{:?}",
        r.frames[0].0
    );
    let text = r.text();
    assert_eq!(
        text.matches("\"content\":\"").count(),
        4,
        "role chunk and 3 tokens"
    );
    // A latency long enough that an override left in force would show on any host.
    let r = client
        .chat(&chat_body(false, json!({})), &[("x-mock-latency", "2s")])
        .await;
    assert!(r.head_after >= Duration::from_secs(2), "{:?}", r.head_after);
    // The next request, without headers, is back to the configured (instant) model: well under
    // the 2 s the override would take (seconds no busy host adds to an instant answer), and
    // near instant where the timer is sure.
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    let bound = gatebench_tests::upper_bound(Duration::from_millis(50), Duration::from_secs(1));
    assert!(r.head_after < bound, "{:?}", r.head_after);
}

#[tokio::test]
async fn configured_rates_are_seeded_per_request_and_counted() {
    let config = mock_upstream::RawSettings {
        fault: vec!["429:10%".into(), "500:5%".into()],
        ..Default::default()
    }
    .validate()
    .unwrap();
    let mock = start_mock(config);
    let mut client = Client::connect(mock.local_addr()).await;
    let mut statuses = Vec::new();
    for seq in 0..1_000u32 {
        let seq = seq.to_string();
        let r = client
            .chat(&chat_body(false, json!({})), &[("x-gatebench-seq", &seq)])
            .await;
        statuses.push(r.status.as_u16());
    }
    let count = |s| statuses.iter().filter(|x| **x == s).count();
    assert!((60..140).contains(&count(429)), "{}", count(429));
    assert!((25..80).contains(&count(500)), "{}", count(500));
    assert_eq!(count(200) + count(429) + count(500), 1_000);
    // The same ordinal always gets the same answer.
    for seq in [3u32, 17, 404] {
        let again = client
            .chat(
                &chat_body(false, json!({})),
                &[("x-gatebench-seq", &seq.to_string())],
            )
            .await;
        assert_eq!(again.status.as_u16(), statuses[seq as usize]);
    }
    let metrics = client.send(Method::GET, "/metrics", &[], b"").await.text();
    let repeats = [3usize, 17, 404]
        .iter()
        .filter(|&&s| statuses[s] == 429)
        .count();
    let line = format!(
        "mock_faults_total{{status=\"429\"}} {}",
        count(429) + repeats
    );
    assert!(metrics.contains(&line), "{line} not in\n{metrics}");
}

#[tokio::test]
async fn mid_stream_faults_break_the_stream_as_asked() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let stream = chat_body(true, json!({}));
    let r = client.chat(&stream, &[("x-mock-fault", "error@3")]).await;
    let text = r.text();
    assert_eq!(
        text.matches("data: ").count(),
        4,
        "three events, then the error"
    );
    assert!(text.ends_with("\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n"));
    assert!(!text.contains("[DONE]"));
    let r = client.chat(&stream, &[("x-mock-fault", "close@5")]).await;
    assert_eq!(r.text().matches("data: ").count(), 5);
    assert!(!r.text().contains("[DONE]"));
    let r = client
        .chat(&stream, &[("x-mock-fault", "truncate@2")])
        .await;
    let text = r.text();
    assert_eq!(text.matches("data: ").count(), 3);
    assert!(!text.ends_with("\n\n"), "the last event is cut");
    let body = serde_json::to_vec(&json!({
        "model": "claude-x", "max_tokens": 5, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]
    }))
    .unwrap();
    let r = client
        .send(
            Method::POST,
            "/v1/messages",
            &[
                ("anthropic-version", "2023-06-01"),
                ("x-mock-fault", "error@4"),
            ],
            &body,
        )
        .await;
    assert!(r.text().ends_with(
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
    ));
}

#[test]
fn loadgen_names_each_mid_stream_fault() {
    use loadgen::commands::run::run;
    use loadgen::LoadArgs;
    let mock = start_mock(Config::default());
    for (fault, kind) in [
        ("error@3", "invalid"),
        ("close@3", "truncated"),
        ("truncate@3", "truncated"),
        ("stall@3", "timeout"),
        ("reset@3", "reset"),
    ] {
        let (result, _) = run(
            LoadArgs {
                rate: Some("100".into()),
                duration: Some("300ms".into()),
                request: loadgen::options::RequestFlags {
                    timeout: Some("300ms".into()),
                    scenario: Some("chat-stream".into()),
                    headers: vec![format!("x-mock-fault: {fault}")],
                    ..Default::default()
                },
                ..gatebench_tests::load_args::args(gatebench_tests::load_args::url(&mock))
            },
            vec![],
        )
        .unwrap();
        let r = &result.runs[0];
        assert_eq!(r.errors.get(kind), Some(&30), "{fault}: {:?}", r.errors);
    }
}

/// Sends one streaming chat request on a raw socket and reads until the server ends it:
/// what arrived, and the error that ended it (`None` for a clean close).
async fn raw_stream(
    addr: std::net::SocketAddr,
    headers: &str,
) -> (String, Option<std::io::ErrorKind>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = serde_json::to_vec(&chat_body(true, json!({"max_tokens": 6}))).unwrap();
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n{headers}\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body).await.unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf)).await {
            Ok(Ok(0)) => break None,
            Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
            Ok(Err(err)) => break Some(err.kind()),
            Err(_) => panic!("the stream neither ended nor reset"),
        }
        // A clean chunked body ends with its terminator; the connection then stays open.
        if received.ends_with(b"0\r\n\r\n") {
            break None;
        }
    };
    (String::from_utf8_lossy(&received).into_owned(), end)
}

#[tokio::test]
async fn a_reset_fault_resets_the_connection_after_the_events_before_it() {
    let mock = start_mock(Config::default());
    let (text, end) = raw_stream(
        mock.local_addr(),
        "x-mock-fault: reset@3\r\nx-mock-itl: 20ms\r\n",
    )
    .await;
    assert_eq!(end, Some(std::io::ErrorKind::ConnectionReset), "{text}");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert_eq!(text.matches("data: ").count(), 3, "{text}");
    // Without the fault the same request ends cleanly.
    let (text, end) = raw_stream(mock.local_addr(), "x-mock-itl: 1ms\r\n").await;
    assert_eq!(end, None);
    assert!(text.contains("[DONE]"));
    assert!(mock
        .metrics()
        .to_prometheus()
        .contains("mock_stream_faults_total{kind=\"reset\"} 1"));
}

#[tokio::test]
async fn configured_stream_faults_hit_the_drawn_requests_of_their_route_only() {
    let settings = ["chat:reset@2:30%", "chat:error@1:20%", "messages:529:100%"];
    let rates = FaultRates::parse(&settings.map(String::from)).unwrap();
    let mock = start_mock(Config {
        faults: rates.clone(),
        ..Default::default()
    });
    let (mut resets, mut errors) = (0, 0);
    for seq in 0..40u64 {
        let header = format!("x-gatebench-seq: {seq}\r\n");
        let (text, end) = raw_stream(mock.local_addr(), &header).await;
        match rates.pick(0, seq, Api::Chat, true) {
            Some(FaultKind::Stream(f)) if f.kind == StreamFaultKind::Reset => {
                resets += 1;
                assert_eq!(end, Some(std::io::ErrorKind::ConnectionReset), "{seq}");
            }
            Some(_) => {
                errors += 1;
                assert!(text.contains("\"server_error\""), "{seq}: {text}");
                assert!(!text.contains("[DONE]"));
            }
            None => assert!(text.contains("[DONE]"), "{seq}: {text}"),
        }
    }
    assert!(resets > 4 && errors > 2, "{resets} resets, {errors} errors");
    // The same rates leave whole answers alone.
    let mut client = Client::connect(mock.local_addr()).await;
    for seq in 0..10 {
        let seq = seq.to_string();
        let r = client
            .chat(&chat_body(false, json!({})), &[("x-gatebench-seq", &seq)])
            .await;
        assert_eq!(r.status, 200);
    }
}

#[tokio::test]
async fn a_stall_fault_sends_nothing_more_and_keeps_the_connection_open() {
    stall_then_leave(mock_upstream::Http1Server::Own).await;
}

#[tokio::test]
async fn a_stall_under_hyper_is_freed_when_the_client_leaves() {
    stall_then_leave(mock_upstream::Http1Server::Hyper).await;
}

/// A stream stalled at its third event: nothing more is sent and the connection stays open
/// while the client waits; once the client goes away, the stream and its connection are freed
/// (a stall writes nothing, so only the client's FIN can tell).
async fn stall_then_leave(http1: mock_upstream::Http1Server) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mock = start_mock(Config {
        http1,
        ..Config::default()
    });
    let body = serde_json::to_vec(&chat_body(true, json!({"max_tokens": 6}))).unwrap();
    let mut socket = tokio::net::TcpStream::connect(mock.local_addr())
        .await
        .unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n\
         x-mock-fault: stall@2\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body).await.unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let events = |received: &[u8]| String::from_utf8_lossy(received).matches("data: ").count();
    // Read the two events sent before the stall, however slowly they come.
    let before = tokio::time::timeout(Duration::from_secs(10), async {
        while events(&received) < 2 {
            match socket.read(&mut buf).await {
                Ok(0) => panic!("the connection closed"),
                Ok(n) => received.extend_from_slice(&buf[..n]),
                Err(err) => panic!("the connection failed: {err}"),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&received).into_owned();
    assert!(
        before.is_ok(),
        "the events before the stall did not come: {text}"
    );
    // Then nothing more for a while: the connection must neither send, close nor reset. A busy
    // host may delay a third event sent by mistake past this wait, but never fails a good mock.
    match tokio::time::timeout(Duration::from_millis(300), socket.read(&mut buf)).await {
        Err(_) => {}
        Ok(Ok(0)) => panic!("the connection closed"),
        Ok(Ok(n)) => received.extend_from_slice(&buf[..n]),
        Ok(Err(err)) => panic!("the connection failed: {err}"),
    }
    let text = String::from_utf8_lossy(&received);
    assert_eq!(text.matches("data: ").count(), 2, "{text}");
    assert_eq!(
        mock.metrics().streams_open(),
        1,
        "the stalled stream is still open"
    );
    drop(socket);
    let freed = tokio::time::timeout(Duration::from_secs(5), async {
        while mock.metrics().streams_open() > 0 || mock.metrics().connections_open() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(
        freed.is_ok(),
        "{http1:?}: 5 s after the client left, streams open {}, connections open {}",
        mock.metrics().streams_open(),
        mock.metrics().connections_open()
    );
}

#[tokio::test]
async fn every_request_is_counted_refused_or_faulted_and_any_status() {
    use mock_upstream::RouteKind;
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    // Refused: not JSON. Faulted: a status no provider route sends on its own.
    let r = client
        .send(Method::POST, "/v1/chat/completions", &[], b"{nope")
        .await;
    assert_eq!(r.status, 400);
    let r = client
        .chat(&chat_body(false, json!({})), &[("x-mock-status", "418")])
        .await;
    assert_eq!(r.status, 418);
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(r.status, 200);
    let m = mock.metrics();
    assert_eq!(
        m.requests(RouteKind::Chat),
        3,
        "refused, faulted and answered"
    );
    assert_eq!(m.rejections(RouteKind::Chat), 1);
    assert_eq!(m.responses(418), 1);
    assert_eq!(m.faults(418), 1);
    let text = client.send(Method::GET, "/metrics", &[], b"").await;
    let text: String = text
        .frames
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect();
    for line in [
        "mock_requests_total{route=\"chat\"} 3",
        "mock_requests_rejected_total{route=\"chat\"} 1",
        "mock_responses_total{status=\"418\"} 1",
        "mock_faults_total{status=\"418\"} 1",
    ] {
        assert!(text.contains(line), "{line} not in:\n{text}");
    }
}

#[tokio::test]
async fn more_tokens_than_configured_agree_in_text_deltas_and_usage() {
    // --tokens 16 (the default); the header asks for 40.
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let forty = [("x-mock-tokens", "40")];
    let whole = client
        .chat(&chat_body(false, json!({})), &forty)
        .await
        .json();
    assert_eq!(whole["usage"]["completion_tokens"], 40);
    let text = whole["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let r = client.chat(&chat_body(true, json!({})), &forty).await;
    let streamed: String = gatebench_tests::sse_data(&r.text())
        .iter()
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert_eq!(
        text, streamed,
        "the whole answer's text is the stream's deltas"
    );
    // The Responses stream: its final objects carry the deltas' text.
    let body = json!({"model": "m", "input": "hi", "stream": true});
    let bytes = serde_json::to_vec(&body).unwrap();
    let r = client
        .send(Method::POST, "/v1/responses", &forty, &bytes)
        .await;
    let events: Vec<serde_json::Value> = gatebench_tests::named_events(&r.text())
        .into_iter()
        .map(|(_, data)| data)
        .collect();
    let deltas: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_text.done")
        .expect("output_text.done");
    assert_eq!(done["text"], deltas.as_str());
    assert_eq!(text, deltas);
    let completed = events
        .iter()
        .find(|e| e["type"] == "response.completed")
        .expect("response.completed");
    assert_eq!(
        completed["response"]["output"][0]["content"][0]["text"],
        deltas.as_str()
    );
    assert_eq!(completed["response"]["usage"]["output_tokens"], 40);
}
