//! Non-streaming chat completions: shape, echo, usage, headers, determinism.

use gatebench_tests::{chat_body, start_mock, Client};
use mock_upstream::Config;
use serde_json::json;

#[tokio::test]
async fn completion_has_the_openai_shape() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "application/json");
    for name in [
        "x-request-id",
        "openai-processing-ms",
        "openai-version",
        "x-ratelimit-limit-requests",
        "x-ratelimit-remaining-tokens",
        "content-length",
    ] {
        assert!(r.headers.contains_key(name), "missing {name}");
    }
    let v = r.json();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "gpt-4o-mini");
    let choice = &v["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["finish_reason"], "stop");
    let content = choice["message"]["content"].as_str().unwrap();
    assert!(content.starts_with("Hello from the gatebench mock"));
    // 16 tokens by default; "Say hello." is 10 bytes: ceil(10/4) + 3 per message + 3.
    assert_eq!(v["usage"]["completion_tokens"], 16);
    assert_eq!(v["usage"]["prompt_tokens"], 9);
    assert_eq!(v["usage"]["total_tokens"], 25);
    assert_eq!(
        r.headers["content-length"].to_str().unwrap(),
        r.body().len().to_string()
    );
}

#[tokio::test]
async fn max_tokens_caps_the_output_and_sets_length() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let v = client
        .chat(&chat_body(false, json!({"max_tokens": 3})), &[])
        .await
        .json();
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    assert_eq!(v["choices"][0]["message"]["content"], "Hello from the");
    assert_eq!(v["usage"]["completion_tokens"], 3);

    let body = chat_body(false, json!({"max_tokens": 2, "max_completion_tokens": 5}));
    let v = client.chat(&body, &[]).await.json();
    assert_eq!(v["usage"]["completion_tokens"], 5);

    // A cap above the configured length changes nothing.
    let v = client
        .chat(&chat_body(false, json!({"max_tokens": 500})), &[])
        .await
        .json();
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(v["usage"]["completion_tokens"], 16);
}

#[tokio::test]
async fn model_is_echoed_even_with_escapes() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    for model in ["my-org/llama-3.1-8b", "quote\"and\\slash", "naïve-模型"] {
        let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
        let v = client.chat(&body, &[]).await.json();
        assert_eq!(v["model"], model);
    }
}

#[tokio::test]
async fn same_request_same_bytes_across_servers() {
    let config = Config {
        latency: gatebench_shared::LatencyModel {
            tokens: "uniform:1..50".parse().unwrap(),
            ..Default::default()
        },
        seed: 11,
        ..Config::default()
    };
    let (a, b) = (start_mock(config.clone()), start_mock(config));
    let mut ca = Client::connect(a.local_addr()).await;
    let mut cb = Client::connect(b.local_addr()).await;
    let mut lengths = std::collections::BTreeSet::new();
    for seq in ["0", "1", "2", "3", "77"] {
        for stream in [false, true] {
            let body = chat_body(stream, json!({}));
            let ra = ca.chat(&body, &[("x-gatebench-seq", seq)]).await;
            let rb = cb.chat(&body, &[("x-gatebench-seq", seq)]).await;
            assert_eq!(ra.body(), rb.body(), "seq {seq} stream {stream}");
            lengths.insert(ra.body().len());
        }
    }
    // The length draw really depends on the ordinal.
    assert!(lengths.len() > 2, "{lengths:?}");

    // Without the header, the ordinal is the arrival order: fresh servers agree too.
    let config = Config {
        latency: gatebench_shared::LatencyModel {
            tokens: "uniform:1..50".parse().unwrap(),
            ..Default::default()
        },
        ..Config::default()
    };
    let (c, d) = (start_mock(config.clone()), start_mock(config));
    let mut cc = Client::connect(c.local_addr()).await;
    let mut cd = Client::connect(d.local_addr()).await;
    for _ in 0..5 {
        let body = chat_body(false, json!({}));
        assert_eq!(
            cc.chat(&body, &[]).await.body(),
            cd.chat(&body, &[]).await.body()
        );
    }
}

#[tokio::test]
async fn models_health_and_metrics() {
    let mock = start_mock(Config {
        models: vec!["alpha".into(), "beta".into()],
        ..Config::default()
    });
    let mut client = Client::connect(mock.local_addr()).await;
    let get = hyper::Method::GET;
    let v = client
        .send(get.clone(), "/v1/models", &[], b"")
        .await
        .json();
    assert_eq!(v["object"], "list");
    let ids: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["alpha", "beta"]);
    let v = client.send(get.clone(), "/v1/models/beta", &[], b"").await;
    assert_eq!(v.json()["id"], "beta");
    let missing = client.send(get.clone(), "/v1/models/gamma", &[], b"").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "model_not_found");
    let health = client.send(get.clone(), "/health", &[], b"").await;
    assert_eq!(health.json()["status"], "ok");
    let metrics = client.send(get, "/metrics", &[], b"").await.text();
    assert!(
        metrics.contains("mock_requests_total{route=\"models\"} 3"),
        "{metrics}"
    );
    assert!(metrics.contains("mock_responses_total{status=\"404\"} 1"));
    assert_eq!(mock.metrics().requests(mock_upstream::RouteKind::Health), 1);
}

#[tokio::test]
async fn several_worker_threads_share_one_port() {
    let mock = start_mock(Config {
        threads: 2,
        ..Config::default()
    });
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(Client::connect(mock.local_addr()).await);
    }
    for client in &mut clients {
        let r = client.chat(&chat_body(false, json!({})), &[]).await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(mock.metrics().connections_opened(), 8);
}

#[tokio::test]
async fn tool_calls_answer_a_seeded_share_of_requests_with_tools() {
    let config = mock_upstream::RawSettings {
        tool_calls: Some("50%".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    let mock = start_mock(config);
    let mut client = Client::connect(mock.local_addr()).await;
    let tools = json!([{"type": "function", "function": {"name": "get_weather"}}]);
    let mut calls = Vec::new();
    for seq in 0..40 {
        let seq = seq.to_string();
        let body = chat_body(false, json!({"tools": tools, "max_tokens": 3}));
        let r = client.chat(&body, &[("x-gatebench-seq", &seq)]).await;
        let choice = &r.json()["choices"][0];
        let called = choice["finish_reason"] == "tool_calls";
        if called {
            let call = &choice["message"]["tool_calls"][0];
            assert_eq!(call["function"]["name"], "get_weather");
            assert_eq!(
                call["function"]["arguments"],
                "{\"input\":\"Hello from the\"}"
            );
            assert!(choice["message"]["content"].is_null());
        } else {
            assert_eq!(choice["message"]["content"], "Hello from the");
        }
        // The same request always gets the same answer.
        let again = client.chat(&body, &[("x-gatebench-seq", &seq)]).await;
        assert_eq!(again.body(), r.body());
        calls.push(called);
    }
    let n = calls.iter().filter(|c| **c).count();
    assert!((8..=32).contains(&n), "{n} of 40 answered with a call");
    // Without tools, never a call.
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(r.json()["choices"][0]["finish_reason"], "stop");
}

#[test]
fn loadgen_counts_tool_call_fragments_as_output() {
    use loadgen::commands::run::run;
    use loadgen::LoadArgs;
    let config = mock_upstream::RawSettings {
        tool_calls: Some("100%".into()),
        tokens: Some("8".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    let mock = start_mock(config);
    let body = json!({
        "model": "gpt-4o-mini", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}],
    });
    let (result, _) = run(
        LoadArgs {
            rate: Some("100".into()),
            duration: Some("300ms".into()),
            request: loadgen::options::RequestFlags {
                body: Some(body.to_string()),
                ..Default::default()
            },
            ..gatebench_tests::load_args::args(gatebench_tests::load_args::url(&mock))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 30, "{:?}", r.errors);
    assert_eq!(r.metrics["output_chunks"].p50, 8);
    assert_eq!(r.metrics["output_tokens"].p50, 8);
}

#[tokio::test]
async fn metrics_count_body_bytes_both_ways() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let body = chat_body(false, json!({}));
    let sent = serde_json::to_vec(&body).unwrap().len();
    let whole = client.chat(&body, &[]).await.body().len();
    let stream = client.chat(&chat_body(true, json!({})), &[]).await;
    let streamed = stream.body().len();
    let sent_stream = serde_json::to_vec(&chat_body(true, json!({})))
        .unwrap()
        .len();
    let value = |name: &str| -> usize {
        let text = mock.metrics().to_prometheus();
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} not in\n{text}"))
    };
    assert_eq!(value("mock_request_body_bytes_total"), sent + sent_stream);
    // The client's body is the de-chunked stream: the events' bytes, counted when the stream's
    // body is dropped, which may come a moment after the client read its end: on a busy host,
    // a long moment.
    let expected = whole + streamed;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while value("mock_response_body_bytes_total") != expected
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(value("mock_response_body_bytes_total"), expected);
}

#[tokio::test]
async fn a_bpe_tokenizer_counts_the_prompt_exactly_and_the_config_says_which() {
    let mock = start_mock(Config {
        tokenizer: mock_upstream::Tokenizer::O200k,
        ..Config::default()
    });
    let mut client = Client::connect(mock.local_addr()).await;
    // "The quick brown fox jumps over the lazy dog." is 10 o200k tokens (the estimate says
    // 12), plus 3 for the message and 3 for the reply.
    let body = json!({
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "The quick brown fox jumps over the lazy dog."}],
    });
    let r = client.chat(&body, &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["usage"]["prompt_tokens"], 10 + 3 + 3);
    let config = client
        .send(hyper::Method::GET, "/v1/gatebench/config", &[], b"")
        .await;
    assert!(
        config.text().contains("tokenizer = \"o200k\""),
        "{}",
        config.text()
    );
}
