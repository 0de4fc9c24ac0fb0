//! `--require-api-key`: each provider's 401 without the key or with another; the key is never
//! disclosed.

use gatebench_tests::{chat_body, start_mock, Client};
use hyper::Method;
use serde_json::json;

#[tokio::test]
async fn requests_need_the_key_in_each_providers_header() {
    let config = mock_upstream::RawSettings {
        require_api_key: Some("sk-test-key-0001".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    let mock = start_mock(config);
    let mut client = Client::connect(mock.local_addr()).await;
    let body = chat_body(false, json!({}));
    let r = client.chat(&body, &[]).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"]["type"], "invalid_request_error");
    let r = client
        .chat(&body, &[("authorization", "Bearer sk-other-key-9999")])
        .await;
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"]["code"], "invalid_api_key");
    let r = client
        .chat(&body, &[("authorization", "Bearer sk-test-key-0001")])
        .await;
    assert_eq!(r.status, 200);

    let message = serde_json::to_vec(&json!({
        "model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]
    }))
    .unwrap();
    let version = ("anthropic-version", "2023-06-01");
    let r = client
        .send(Method::POST, "/v1/messages", &[version], &message)
        .await;
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"]["type"], "authentication_error");
    let r = client
        .send(
            Method::POST,
            "/v1/messages",
            &[version, ("x-api-key", "sk-test-key-0001")],
            &message,
        )
        .await;
    assert_eq!(r.status, 200);

    let config = client
        .send(Method::GET, "/v1/gatebench/config", &[], b"")
        .await
        .text();
    assert!(
        config.contains("require-api-key = \"<redacted>\""),
        "{config}"
    );
    assert!(!config.contains("sk-test-key-0001"));
}
