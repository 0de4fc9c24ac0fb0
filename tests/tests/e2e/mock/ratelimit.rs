//! `--rate-limit`: a token bucket per API key that really runs down, refuses in each provider's
//! shape with the wait until a request fits, and keeps keys apart (for key rotation).

use gatebench_tests::{chat_body, start_mock, Client};
use hyper::Method;
use serde_json::json;

fn limited_mock(limit: &str, keys: Option<&str>) -> mock_upstream::MockServer {
    let config = mock_upstream::RawSettings {
        rate_limit: Some(limit.into()),
        require_api_key: keys.map(String::from),
        ..Default::default()
    }
    .validate()
    .unwrap();
    start_mock(config)
}

#[tokio::test]
async fn each_key_has_its_own_request_bucket() {
    let mock = limited_mock("rpm=4", Some("sk-one,sk-two"));
    let mut client = Client::connect(mock.local_addr()).await;
    let body = chat_body(false, json!({}));
    let one = [("authorization", "Bearer sk-one")];
    for remaining in (0..4).rev() {
        let r = client.chat(&body, &one).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["x-ratelimit-limit-requests"], "4");
        assert_eq!(
            r.headers["x-ratelimit-remaining-requests"],
            remaining.to_string()
        );
    }
    let r = client.chat(&body, &one).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"]["code"], "rate_limit_exceeded");
    assert_eq!(r.json()["error"]["type"], "requests");
    // One request refills every 15 s at 4 per minute.
    let wait: u64 = r.headers["retry-after-ms"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((14_000..=15_000).contains(&wait), "{wait}");
    assert_eq!(r.headers["retry-after"], "15");
    assert_eq!(r.headers["x-should-retry"], "true");
    // The second key is untouched: rotating keys gets through.
    let r = client
        .chat(&body, &[("authorization", "Bearer sk-two")])
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["x-ratelimit-remaining-requests"], "3");
    let metrics = mock.metrics().to_prometheus();
    assert!(
        metrics.contains("mock_faults_total{status=\"429\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn tokens_are_charged_prompt_plus_output_and_anthropic_gets_its_shape() {
    // 16 output tokens per answer by default; a few prompt tokens.
    let mock = limited_mock("tpm=60", None);
    let mut client = Client::connect(mock.local_addr()).await;
    let body = chat_body(false, json!({"max_tokens": 10}));
    let r = client.chat(&body, &[]).await;
    assert_eq!(r.status, 200);
    let remaining: u64 = r.headers["x-ratelimit-remaining-tokens"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let usage = r.json()["usage"]["total_tokens"].as_u64().unwrap();
    assert_eq!(
        remaining,
        60 - usage,
        "charged what the answer's usage says"
    );

    let message = serde_json::to_vec(&json!({
        "model": "claude-x", "max_tokens": 30, "messages": [{"role": "user", "content": "hi"}]
    }))
    .unwrap();
    let version = ("anthropic-version", "2023-06-01");
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let r = client
            .send(Method::POST, "/v1/messages", &[version], &message)
            .await;
        statuses.push(r.status.as_u16());
        if r.status == 429 {
            assert_eq!(r.json()["error"]["type"], "rate_limit_error");
            assert!(r.headers.contains_key("retry-after"));
            assert!(r.headers.contains_key("anthropic-ratelimit-tokens-reset"));
        } else {
            assert!(r
                .headers
                .contains_key("anthropic-ratelimit-tokens-remaining"));
        }
    }
    assert!(statuses.contains(&429), "{statuses:?}");
    assert_eq!(statuses[0], 200);
}
