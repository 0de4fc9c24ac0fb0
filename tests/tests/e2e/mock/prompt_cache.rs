//! `--prompt-cache on`: prefixes seen before, per API key, reported where each API reports
//! them, whole and streamed; off by default, with the bytes of before.

use gatebench_tests::{named_events, sse_data, start_mock, Client};
use hyper::Method;
use mock_upstream::MockServer;
use serde_json::{json, Value};

fn cached_mock(extra: mock_upstream::RawSettings) -> MockServer {
    let settings = mock_upstream::RawSettings {
        prompt_cache: Some("on".into()),
        tokens: Some("2".into()),
        ..extra
    };
    start_mock(settings.validate().unwrap())
}

/// A system prompt of about 1,500 tokens by the estimate.
fn system() -> String {
    "You are a careful assistant who answers briefly. ".repeat(120)
}

async fn post(client: &mut Client, path: &str, key: &str, body: &Value) -> String {
    let bearer = format!("Bearer {key}");
    let headers = [
        ("content-type", "application/json"),
        ("authorization", bearer.as_str()),
        ("x-api-key", key),
        ("x-goog-api-key", key),
        ("anthropic-version", "2023-06-01"),
    ];
    let r = client
        .send(
            Method::POST,
            path,
            &headers,
            &serde_json::to_vec(body).unwrap(),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
}

fn chat(question: &str, stream: bool) -> Value {
    let mut body = json!({"model": "gpt-4o", "stream": stream, "messages": [
        {"role": "system", "content": system()},
        {"role": "user", "content": question}]});
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

fn usage_of_stream(text: &str) -> Value {
    let data = sse_data(text);
    let last = &data[data.len() - 2];
    serde_json::from_str::<Value>(last).unwrap()["usage"].clone()
}

#[tokio::test]
async fn chat_reads_the_longest_step_seen_before_per_key_whole_and_streamed() {
    let mock = cached_mock(Default::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let first: Value = serde_json::from_str(
        &post(
            &mut client,
            "/v1/chat/completions",
            "k1",
            &chat("one?", false),
        )
        .await,
    )
    .unwrap();
    let details = &first["usage"]["prompt_tokens_details"];
    let prompt = first["usage"]["prompt_tokens"].as_u64().unwrap();
    assert!(prompt > 1024, "{prompt}");
    assert_eq!(details["cached_tokens"], 0);
    let written = details["cache_write_tokens"].as_u64().unwrap();
    assert!(written >= 1024 && (written - 1024) % 128 == 0, "{written}");

    let second = usage_of_stream(
        &post(
            &mut client,
            "/v1/chat/completions",
            "k1",
            &chat("two?", true),
        )
        .await,
    );
    let cached = second["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    assert!(
        cached >= 1024 && cached % 128 == 0 && cached <= written,
        "{second}"
    );
    assert!(cached < second["prompt_tokens"].as_u64().unwrap());

    // Another key's scope is its own: the same prompt misses.
    let other: Value = serde_json::from_str(
        &post(
            &mut client,
            "/v1/chat/completions",
            "k2",
            &chat("two?", false),
        )
        .await,
    )
    .unwrap();
    assert_eq!(other["usage"]["prompt_tokens_details"]["cached_tokens"], 0);

    let metrics = mock.local_addr();
    let text = reqwest_metrics(metrics).await;
    assert!(text.contains("mock_prompt_cache_hits_total 1\n"), "{text}");
    assert!(
        text.contains("mock_prompt_cache_misses_total 2\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("vllm:prefix_cache_hits {cached}\n")),
        "{text}"
    );
}

async fn reqwest_metrics(addr: std::net::SocketAddr) -> String {
    let mut client = Client::connect(addr).await;
    client.send(Method::GET, "/metrics", &[], b"").await.text()
}

#[tokio::test]
async fn off_by_default_the_usage_is_as_before() {
    let mock = start_mock(mock_upstream::Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    for _ in 0..2 {
        let text = post(
            &mut client,
            "/v1/chat/completions",
            "k",
            &chat("one?", false),
        )
        .await;
        assert!(!text.contains("prompt_tokens_details"), "{text}");
    }
    let text = reqwest_metrics(mock.local_addr()).await;
    assert!(!text.contains("prompt_cache"), "{text}");
}

#[tokio::test]
async fn the_same_requests_give_the_same_bytes_and_entries_expire() {
    let sequence = [("k1", "one?"), ("k1", "two?"), ("", "one?"), ("", "three?")];
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mock = cached_mock(Default::default());
        let mut client = Client::connect(mock.local_addr()).await;
        let mut bodies = Vec::new();
        for (key, question) in sequence {
            bodies.push(
                post(
                    &mut client,
                    "/v1/chat/completions",
                    key,
                    &chat(question, false),
                )
                .await,
            );
        }
        runs.push(bodies);
    }
    assert_eq!(runs[0], runs[1]);
    assert!(runs[0][3].contains("\"cached_tokens\":1"), "{}", runs[0][3]);

    let mock = cached_mock(mock_upstream::RawSettings {
        prompt_cache_ttl: Some("200ms".into()),
        ..Default::default()
    });
    let mut client = Client::connect(mock.local_addr()).await;
    post(
        &mut client,
        "/v1/chat/completions",
        "k",
        &chat("one?", false),
    )
    .await;
    std::thread::sleep(std::time::Duration::from_millis(400));
    let late = post(
        &mut client,
        "/v1/chat/completions",
        "k",
        &chat("one?", false),
    )
    .await;
    assert!(late.contains("\"cached_tokens\":0"), "{late}");
}

#[tokio::test]
async fn responses_report_in_input_tokens_details_and_response_completed() {
    let mock = cached_mock(Default::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let body = |stream: bool| json!({"model": "gpt-4o", "instructions": system(), "input": "hi", "stream": stream});
    let first: Value =
        serde_json::from_str(&post(&mut client, "/v1/responses", "k", &body(false)).await).unwrap();
    let details = &first["usage"]["input_tokens_details"];
    assert_eq!(details["cached_tokens"], 0);
    assert!(
        details["cache_write_tokens"].as_u64().unwrap() >= 1024,
        "{details}"
    );
    let events = named_events(&post(&mut client, "/v1/responses", "k", &body(true)).await);
    let (name, done) = events.last().unwrap();
    assert_eq!(name, "response.completed");
    let details = &done["response"]["usage"]["input_tokens_details"];
    assert!(
        details["cached_tokens"].as_u64().unwrap() >= 1024,
        "{details}"
    );
    assert_eq!(details["cache_write_tokens"], 0);
}

#[tokio::test]
async fn anthropic_reports_breakpoints_in_message_start_and_message_delta() {
    let mock = cached_mock(Default::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let body = |stream: bool| {
        json!({"model": "claude-sonnet-4-5", "max_tokens": 16, "stream": stream,
            "system": [{"type": "text", "text": system(),
                        "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": "hi"}]})
    };
    let first: Value =
        serde_json::from_str(&post(&mut client, "/v1/messages", "k", &body(false)).await).unwrap();
    let usage = &first["usage"];
    let written = usage["cache_creation_input_tokens"].as_u64().unwrap();
    assert!(written >= 1024, "{usage}");
    assert_eq!(usage["cache_read_input_tokens"], 0);
    assert_eq!(
        usage["cache_creation"]["ephemeral_1h_input_tokens"],
        written
    );
    assert_eq!(usage["cache_creation"]["ephemeral_5m_input_tokens"], 0);
    let uncached = usage["input_tokens"].as_u64().unwrap();
    assert!(uncached > 0 && uncached < 50, "{usage}");

    let events = named_events(&post(&mut client, "/v1/messages", "k", &body(true)).await);
    let start = &events[0].1["message"]["usage"];
    assert_eq!(start["cache_read_input_tokens"], written, "{start}");
    assert_eq!(start["cache_creation_input_tokens"], 0);
    assert_eq!(start["input_tokens"], uncached);
    let (name, delta) = &events[events.len() - 2];
    assert_eq!(name, "message_delta");
    assert_eq!(
        delta["usage"]["cache_read_input_tokens"], written,
        "{delta}"
    );
    assert_eq!(delta["usage"]["output_tokens"], 2);

    // Without a breakpoint, nothing is cached.
    let mut plain = body(false);
    plain["system"] = json!(system());
    let v: Value =
        serde_json::from_str(&post(&mut client, "/v1/messages", "k", &plain).await).unwrap();
    assert_eq!(v["usage"]["cache_read_input_tokens"], 0);
    assert_eq!(v["usage"]["cache_creation_input_tokens"], 0);
}

#[tokio::test]
async fn gemini_and_bedrock_report_their_fields() {
    let mock = cached_mock(Default::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let gemini = json!({"systemInstruction": {"parts": [{"text": system()}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let path = "/v1beta/models/gemini-2.5-flash:generateContent";
    let first: Value = serde_json::from_str(&post(&mut client, path, "k", &gemini).await).unwrap();
    assert!(first["usageMetadata"]
        .get("cachedContentTokenCount")
        .is_none());
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    let text = post(&mut client, path, "k", &gemini).await;
    let last = text.trim_end().rsplit("data: ").next().unwrap();
    let last: Value = serde_json::from_str(last).unwrap();
    let meta = &last["usageMetadata"];
    let cached = meta["cachedContentTokenCount"].as_u64().unwrap();
    assert!(cached >= 1024 && cached <= meta["promptTokenCount"].as_u64().unwrap());

    let bedrock = json!({"system": [{"text": system()}, {"cachePoint": {"type": "default"}}],
        "messages": [{"role": "user", "content": [{"text": "hi"}]}]});
    let path = "/model/anthropic.claude-sonnet-4-20250514-v1:0/converse";
    let first: Value = serde_json::from_str(&post(&mut client, path, "k", &bedrock).await).unwrap();
    let written = first["usage"]["cacheWriteInputTokens"].as_u64().unwrap();
    assert!(written >= 1024, "{first}");
    assert_eq!(first["usage"]["cacheReadInputTokens"], 0);
    let again: Value = serde_json::from_str(&post(&mut client, path, "k", &bedrock).await).unwrap();
    let usage = &again["usage"];
    assert_eq!(usage["cacheReadInputTokens"], written);
    let sum = [
        "inputTokens",
        "outputTokens",
        "cacheReadInputTokens",
        "cacheWriteInputTokens",
    ]
    .iter()
    .map(|k| usage[*k].as_u64().unwrap())
    .sum::<u64>();
    assert_eq!(usage["totalTokens"], sum);
}
