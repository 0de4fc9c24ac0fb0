//! Faults on purpose: forced by `x-mock-*` headers or drawn at configured rates, each in the
//! route's provider shape with the provider's retry headers, counted on /metrics.

use std::time::Duration;

use gatebench_tests::{chat_body, start_mock, Client};
use hyper::Method;
use mock_upstream::Config;
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
    let r = client
        .chat(&chat_body(false, json!({})), &[("x-mock-latency", "60ms")])
        .await;
    assert!(
        r.head_after >= Duration::from_millis(60),
        "{:?}",
        r.head_after
    );
    // The next request, without headers, is back to the configured (instant) model.
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert!(
        r.head_after < Duration::from_millis(50),
        "{:?}",
        r.head_after
    );
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
    use loadgen::run::run;
    use loadgen::RunArgs;
    let mock = start_mock(Config::default());
    for (fault, kind) in [
        ("error@3", "invalid"),
        ("close@3", "truncated"),
        ("truncate@3", "truncated"),
        ("stall@3", "timeout"),
    ] {
        let (result, _) = run(
            RunArgs {
                rate: Some("100".into()),
                duration: Some("300ms".into()),
                timeout: Some("300ms".into()),
                scenario: Some("chat-stream".into()),
                headers: vec![format!("x-mock-fault: {fault}")],
                ..crate::load::args(crate::load::url(&mock))
            },
            vec![],
        )
        .unwrap();
        let r = &result.runs[0];
        assert_eq!(r.errors.get(kind), Some(&30), "{fault}: {:?}", r.errors);
    }
}
