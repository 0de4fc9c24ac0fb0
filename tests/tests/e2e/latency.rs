//! Latency accuracy: deadlines are absolute, never early, and late by at most a timer tick or
//! two. Tolerances leave room for a loaded 2-core machine.

use std::time::Duration;

use gatebench_shared::LatencyModel;
use gatebench_tests::{chat_body, start_mock, Client};
use mock_upstream::Config;
use serde_json::json;

const SLACK: Duration = Duration::from_millis(40);

fn model(ttft: &str, itl: &str, tokens: &str) -> Config {
    Config {
        latency: LatencyModel {
            ttft: ttft.parse().unwrap(),
            itl: itl.parse().unwrap(),
            tokens: tokens.parse().unwrap(),
            ..LatencyModel::default()
        },
        ..Config::default()
    }
}

#[tokio::test]
async fn sixty_tokens_at_ten_ms_take_six_hundred_ms() {
    let mock = start_mock(model("10ms", "10ms", "60"));
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(true, json!({})), &[]).await;
    // Headers come at once, before the first token.
    assert!(
        r.head_after < Duration::from_millis(10),
        "{:?}",
        r.head_after
    );
    let e2e = r.end_after();
    let expected = Duration::from_millis(10 + 59 * 10);
    assert!(e2e >= expected, "e2e {e2e:?} is early");
    assert!(
        e2e <= expected + SLACK,
        "e2e {e2e:?} drifted past {expected:?}"
    );

    // Token k is never early: due at 10 ms + k × 10 ms.
    let mut k = 0u64;
    for (at, bytes) in &r.frames {
        let text = String::from_utf8_lossy(bytes);
        for event in text.split("\n\n").filter(|e| e.contains("\"content\":\"")) {
            if event.contains("\"content\":\"\"") {
                continue; // the role chunk
            }
            let due = Duration::from_millis(10 + 10 * k);
            assert!(*at >= due, "token {k} at {at:?}, due {due:?}");
            k += 1;
        }
    }
    assert_eq!(k, 60);
    assert!(mock.metrics().emission_error.count() >= 60);
}

#[tokio::test]
async fn time_to_first_token_is_the_configured_one() {
    let mock = start_mock(model("150ms", "0", "5"));
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(true, json!({})), &[]).await;
    let first = r.frames.first().unwrap().0;
    assert!(first >= Duration::from_millis(150), "{first:?}");
    assert!(first <= Duration::from_millis(150) + SLACK, "{first:?}");
    // With no inter-token gap, the rest leaves with the first token.
    assert!(r.end_after() - first < Duration::from_millis(20));
}

#[tokio::test]
async fn non_streaming_takes_the_stream_e2e_unless_latency_is_set() {
    let mock = start_mock(model("100ms", "10ms", "11"));
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    let expected = Duration::from_millis(200);
    assert!(r.head_after >= expected, "{:?}", r.head_after);
    assert!(r.head_after <= expected + SLACK, "{:?}", r.head_after);
    assert_eq!(r.headers["openai-processing-ms"], "200");

    let mut config = model("100ms", "10ms", "11");
    config.latency.latency = Some("30ms".parse().unwrap());
    let mock = start_mock(config);
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert!(
        r.head_after >= Duration::from_millis(30),
        "{:?}",
        r.head_after
    );
    assert!(r.head_after <= Duration::from_millis(30) + SLACK);
}

#[tokio::test]
async fn a_slow_stream_does_not_hold_up_other_requests() {
    let mock = start_mock(model("0", "50ms", "20"));
    let addr = mock.local_addr();
    let slow = tokio::spawn(async move {
        let mut client = Client::connect(addr).await;
        client
            .chat(&chat_body(true, json!({})), &[])
            .await
            .end_after()
    });
    let mut fast = Client::connect(addr).await;
    let mut config_body = chat_body(false, json!({}));
    config_body["max_tokens"] = json!(1);
    let r = fast.chat(&config_body, &[]).await;
    assert!(
        r.head_after < Duration::from_millis(200),
        "{:?}",
        r.head_after
    );
    assert!(slow.await.unwrap() >= Duration::from_millis(950));
}
