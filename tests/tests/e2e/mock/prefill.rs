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
    let (status, first, _) = chat_at(addr, words).await;
    (status, first)
}

/// [`chat`], with the instant the first frame arrived as well.
async fn chat_at(addr: std::net::SocketAddr, words: usize) -> (u16, Duration, Instant) {
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
    (r.status.as_u16(), first, sent + first)
}

/// The mock's `/metrics` text.
async fn metrics(addr: std::net::SocketAddr) -> String {
    let mut client = Client::connect(addr).await;
    client.send(Method::GET, "/metrics", &[], b"").await.text()
}

/// Waits until the mock's `/metrics` shows `line`, however slow the host; panics after 10 s.
async fn until_metrics_show(addr: std::net::SocketAddr, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = metrics(addr).await;
        if text.contains(line) {
            return;
        }
        assert!(Instant::now() < deadline, "{line:?} never showed:\n{text}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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
    // Never before its prefill, on any host.
    assert!(long >= Duration::from_millis(450), "{long:?}");
    // A request leaves the running count once its answer is done, which may be a moment after
    // the client has read it.
    until_metrics_show(mock.local_addr(), "vllm:num_requests_running 0\n").await;
    // The times the mock planned, which no host's load moves: about 2 ms for the short prompt,
    // half a second for the long one.
    let text = metrics(mock.local_addr()).await;
    for line in [
        "vllm:time_to_first_token_seconds_bucket{le=\"0.005\"} 1\n",
        "vllm:time_to_first_token_seconds_bucket{le=\"0.25\"} 1\n",
        "vllm:time_to_first_token_seconds_count 2\n",
    ] {
        assert!(text.contains(line), "{line} not in:\n{text}");
    }
    // Those times as the client saw them, where the timer is sure.
    if gatebench_tests::precision_run() {
        assert!(long < Duration::from_millis(2000), "{long:?}");
        assert!(short < Duration::from_millis(150), "{short:?}");
    }
}

#[tokio::test]
async fn past_the_running_bound_requests_wait_and_past_the_queue_get_429() {
    // Each request runs for seconds: time enough, on any host, to see it running or waiting on
    // /metrics and send the next while it still is.
    let mock = mock(mock_upstream::RawSettings {
        ttft: Some("2s".into()),
        max_running: Some(1),
        max_waiting: Some(1),
        ..Default::default()
    });
    let addr = mock.local_addr();
    let start = Instant::now();
    let first = tokio::spawn(chat_at(addr, 1));
    until_metrics_show(addr, "vllm:num_requests_running 1\n").await;
    let second = tokio::spawn(chat_at(addr, 1));
    until_metrics_show(addr, "vllm:num_requests_waiting 1\n").await;
    let (status, _) = chat(addr, 1).await;
    assert_eq!(status, 429, "the queue of one is full");
    let (s1, t1, _) = first.await.unwrap();
    let (s2, _, at2) = second.await.unwrap();
    assert_eq!((s1, s2), (200, 200));
    assert!(t1 >= Duration::from_millis(1990), "{t1:?}");
    // The second waited for the first's slot (2 s at least from before the first was sent),
    // then had its own 2 s; the mock counts its wait from a moment after its arrival, so allow
    // it a little.
    let t2 = at2 - start;
    assert!(t2 >= Duration::from_millis(3900), "{t2:?}");
}

#[tokio::test]
async fn cached_prompt_tokens_take_no_prefill_time() {
    let mock = mock(mock_upstream::RawSettings {
        prefill_per_token: Some("100us".into()),
        prompt_cache: Some("on".into()),
        ..Default::default()
    });
    let (_, cold) = chat(mock.local_addr(), 4000).await;
    let (_, warm) = chat(mock.local_addr(), 4000).await;
    assert!(cold >= Duration::from_millis(450), "{cold:?}");
    // All but the last partial step of 128 tokens is read from the cache: under 13 ms of
    // prefill planned for the warm request, half a second for the cold one, as the mock's own
    // account says on any host; and so the client sees it where the timer is sure.
    let text = metrics(mock.local_addr()).await;
    for line in [
        "vllm:time_to_first_token_seconds_bucket{le=\"0.02\"} 1\n",
        "vllm:time_to_first_token_seconds_bucket{le=\"0.25\"} 1\n",
        "vllm:time_to_first_token_seconds_count 2\n",
    ] {
        assert!(text.contains(line), "{line} not in:\n{text}");
    }
    if gatebench_tests::precision_run() {
        assert!(warm < Duration::from_millis(250), "{warm:?}");
    }
}
