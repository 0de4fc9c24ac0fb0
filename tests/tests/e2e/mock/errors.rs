//! What a user can get wrong gets OpenAI's error shape, and the connection survives it.

use gatebench_tests::{chat_body, start_mock, Client};
use hyper::Method;
use mock_upstream::Config;
use serde_json::json;

fn assert_openai_error(v: &serde_json::Value, kind: &str) {
    let error = v["error"].as_object().expect("an error object");
    for key in ["message", "type", "param", "code"] {
        assert!(error.contains_key(key), "error without {key}: {v}");
    }
    assert_eq!(error["type"], kind);
}

#[tokio::test]
async fn unknown_paths_and_wrong_methods() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client
        .send(Method::POST, "/v1/embeddingz", &[], b"{}")
        .await;
    assert_eq!(r.status, 404);
    assert_openai_error(&r.json(), "invalid_request_error");
    assert_eq!(
        r.json()["error"]["message"],
        "Invalid URL (POST /v1/embeddingz)"
    );

    let r = client
        .send(Method::GET, "/v1/chat/completions", &[], b"")
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.headers["allow"], "POST");
    assert_openai_error(&r.json(), "invalid_request_error");
    assert!(client.is_open());
}

#[tokio::test]
async fn requests_the_provider_rejects_are_rejected() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let message = |content: &str| json!([{"role": "user", "content": content}]);
    let cases = [
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": []}),
            "empty array",
            "messages",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "", "messages": message("hi")}),
            "you must provide a model parameter",
            "",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": message("hi"), "stream_options": {"include_usage": true}}),
            "only allowed when 'stream' is enabled",
            "stream_options",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": message("hi"), "n": 2}),
            "'n'",
            "n",
        ),
        (
            "/v1/embeddings",
            json!({"model": "m", "input": ""}),
            "'$.input' is invalid",
            "input",
        ),
        (
            "/v1/embeddings",
            json!({"model": "", "input": "hi"}),
            "you must provide a model parameter",
            "",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": message("hi"), "max_tokens": "ten"}),
            "Invalid type for 'max_tokens'",
            "max_tokens",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": message("hi"), "stream": "yes"}),
            "Invalid type for 'stream'",
            "stream",
        ),
    ];
    for (path, body, expected, param) in cases {
        let bytes = serde_json::to_vec(&body).unwrap();
        let r = client.send(Method::POST, path, &[], &bytes).await;
        assert_eq!(r.status, 400, "{body}");
        let v = r.json();
        assert_openai_error(&v, "invalid_request_error");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(expected),
            "{body}: {v}"
        );
        assert!(
            !v["error"]["message"]
                .as_str()
                .unwrap()
                .contains(" at line "),
            "serde's position leaks: {v}"
        );
        if !param.is_empty() {
            assert_eq!(v["error"]["param"], param, "{body}");
        }
    }
    // Anthropic's own words for the same mistakes.
    let anthropic = [("anthropic-version", "2023-06-01")];
    for (body, expected) in [
        (
            json!({"model": "claude", "max_tokens": 5, "messages": []}),
            "at least one message is required",
        ),
        (
            json!({"model": "", "max_tokens": 5, "messages": message("hi")}),
            "model: String should have at least 1 character",
        ),
        (
            json!({"model": "c", "max_tokens": "x", "messages": message("hi")}),
            "max_tokens: invalid type",
        ),
    ] {
        let bytes = serde_json::to_vec(&body).unwrap();
        let r = client
            .send(Method::POST, "/v1/messages", &anthropic, &bytes)
            .await;
        assert_eq!(r.status, 400, "{body}");
        let v = r.json();
        assert_eq!(v["type"], "error", "{v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(expected),
            "{v}"
        );
    }
    // One choice still works, with or without a stream.
    let r = client.chat(&chat_body(false, json!({"n": 1})), &[]).await;
    assert_eq!(r.status, 200);
    assert!(client.is_open());
}

#[tokio::test]
async fn head_is_answered_wherever_get_is() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    for path in ["/health", "/v1/models"] {
        let r = client.send(Method::HEAD, path, &[], b"").await;
        assert_eq!(r.status, 200, "HEAD {path}");
        assert!(r.frames.is_empty(), "HEAD {path} has no body");
    }
    // No stray body bytes: the next answer on the connection parses.
    let r = client.send(Method::GET, "/health", &[], b"").await;
    assert_eq!(r.status, 200);
    assert!(client.is_open());
}

#[tokio::test]
async fn bad_bodies_get_400_and_keep_the_connection() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let path = "/v1/chat/completions";
    let cases: [(&[u8], &str); 8] = [
        (b"{not json", "could not parse the JSON body"),
        (b"", "could not parse the JSON body"),
        (b"[1, 2]", "expected a JSON object"),
        (b"\"text\"", "expected a JSON object"),
        (br#"{"messages": []}"#, "you must provide a model parameter"),
        (
            br#"{"model": "m"}"#,
            "Missing required parameter: 'messages'",
        ),
        (
            br#"{"model": "m", "messages": [], "max_tokens": 0}"#,
            "Invalid 'max_tokens'",
        ),
        (
            br#"{"model": 5, "messages": []}"#,
            "Invalid type for 'model'",
        ),
    ];
    for (body, expected) in cases {
        let r = client.send(Method::POST, path, &[], body).await;
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(body));
        let v = r.json();
        assert_openai_error(&v, "invalid_request_error");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{message}");
        assert!(client.is_open(), "connection survives a 400");
    }
    let r = client
        .chat(
            &chat_body(false, json!({})),
            &[("x-gatebench-seq", "minus one")],
        )
        .await;
    assert_eq!(r.status, 400);
    // A good request still works on the same connection.
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(mock.metrics().connections_opened(), 1);
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let mock = start_mock(Config {
        max_body_bytes: 1024,
        ..Config::default()
    });
    // Declared too large: refused before reading.
    let mut client = Client::connect(mock.local_addr()).await;
    let big = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(2000)}]});
    let r = client.chat(&big, &[]).await;
    assert_eq!(r.status, 413);
    assert_openai_error(&r.json(), "invalid_request_error");
    assert_eq!(r.json()["error"]["code"], "request_too_large");

    // Chunked, with no declared length: refused once the limit is passed.
    let mut tcp = tokio::net::TcpStream::connect(mock.local_addr())
        .await
        .unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = b"POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\n\
        transfer-encoding: chunked\r\n\r\n"
        .to_vec();
    for _ in 0..3 {
        request.extend_from_slice(format!("{:x}\r\n{}\r\n", 600, "a".repeat(600)).as_bytes());
    }
    request.extend_from_slice(b"0\r\n\r\n");
    tcp.write_all(&request).await.unwrap();
    let mut response = Vec::new();
    tcp.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");

    // A body just under the limit is fine.
    let ok = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(900)}]});
    let mut client = Client::connect(mock.local_addr()).await;
    assert_eq!(client.chat(&ok, &[]).await.status, 200);
}

#[tokio::test]
async fn large_bodies_under_the_default_limit_are_read() {
    // Long-context tests send megabytes; the default limit is 16 MiB.
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let text = "lorem ipsum ".repeat(400_000); // 4.8 MB
    let body = json!({"model": "m", "messages": [{"role": "user", "content": text}]});
    let r = client.chat(&body, &[]).await;
    assert_eq!(r.status, 200);
    let prompt = r.json()["usage"]["prompt_tokens"].as_u64().unwrap();
    assert_eq!(prompt, (4_800_000u64).div_ceil(4) + 6);
}
