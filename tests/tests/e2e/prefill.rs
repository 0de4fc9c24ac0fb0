//! The prefill model: a time to first token that grows with the prompt's uncached tokens, and
//! the bound on running requests with its queue, 429 past it.

use std::time::{Duration, Instant};

use gatebench_tests::{start_mock, Client};
use hyper::Method;
use serde_json::json;

fn mock(settings: mock_upstream::RawSettings) -> mock_upstream::MockServer {
    start_mock(settings.validate().unwrap())
}

async fn chat(addr: std::net::SocketAddr, words: usize) -> (u16, Duration) {
    let mut client = Client::connect(addr).await;
    let body = json!({"model": "gpt-4o", "stream": true, "messages": [
        {"role": "user", "content": "word ".repeat(words)}]});
    let sent = Instant::now();
    let r = client
        .send(
            Method::POST,
            "/v1/chat/completions",
            &[("content-type", "application/json")],
            &serde_json::to_vec(&body).unwrap(),
        )
        .await;
    let first = r.frames.first().map_or(sent.elapsed(), |(at, _)| *at);
    (r.status.as_u16(), first)
}

#[tokio::test]
async fn time_to_first_token_grows_with_uncached_prompt_tokens() {
    let mock = mock(mock_upstream::RawSettings {
        prefill_per_token: Some("100us".into()),
        ..Default::default()
    });
    // 4,000 words of 5 bytes: about 5,000 tokens by the estimate, 0.5 s of prefill.
    let (status, long) = chat(mock.local_addr(), 4000).await;
    assert_eq!(status, 200);
    let (_, short) = chat(mock.local_addr(), 10).await;
    assert!(long >= Duration::from_millis(450), "{long:?}");
    assert!(long < Duration::from_millis(2000), "{long:?}");
    assert!(short < Duration::from_millis(150), "{short:?}");
    let mut client = Client::connect(mock.local_addr()).await;
    let text = client.send(Method::GET, "/metrics", &[], b"").await.text();
    assert!(
        text.contains("vllm:time_to_first_token_seconds_count 2\n"),
        "{text}"
    );
    assert!(text.contains("vllm:num_requests_running 0\n"), "{text}");
}

#[tokio::test]
async fn past_the_running_bound_requests_wait_and_past_the_queue_get_429() {
    let mock = mock(mock_upstream::RawSettings {
        ttft: Some("300ms".into()),
        max_running: Some(1),
        max_waiting: Some(1),
        ..Default::default()
    });
    let addr = mock.local_addr();
    let first = tokio::spawn(chat(addr, 1));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = tokio::spawn(chat(addr, 1));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (status, _) = chat(addr, 1).await;
    assert_eq!(status, 429, "the queue of one is full");
    let (s1, t1) = first.await.unwrap();
    let (s2, t2) = second.await.unwrap();
    assert_eq!((s1, s2), (200, 200));
    assert!(t1 >= Duration::from_millis(290), "{t1:?}");
    // The second waited for the first's slot, then had its own 300 ms.
    assert!(t2 >= Duration::from_millis(500), "{t2:?}");
}
