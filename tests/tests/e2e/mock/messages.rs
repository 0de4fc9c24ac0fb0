//! Anthropic's Messages API on the wire: headers, named events in order (ping included),
//! timing from the latency model, errors in Anthropic's shape, and loadgen reading the stream.

use std::time::Duration;

use gatebench_shared::LatencyModel;
use gatebench_tests::{named_events, start_mock, Client};
use hyper::Method;
use loadgen::commands::run::run;
use loadgen::LoadArgs;
use mock_upstream::Config;
use serde_json::{json, Value};

use gatebench_tests::load_args::args;

const VERSION: (&str, &str) = ("anthropic-version", "2023-06-01");

async fn post(
    client: &mut Client,
    body: Value,
    headers: &[(&str, &str)],
) -> gatebench_tests::Recorded {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let bytes = serde_json::to_vec(&body).unwrap();
    client
        .send(Method::POST, "/v1/messages", &all, &bytes)
        .await
}

fn body(stream: bool, max_tokens: u64) -> Value {
    json!({
        "model": "claude-3-5-haiku-latest",
        "max_tokens": max_tokens,
        "stream": stream,
        "messages": [{"role": "user", "content": "Say hello."}],
    })
}

#[tokio::test]
async fn a_stream_sends_every_event_in_order_on_time() {
    let mock = start_mock(Config {
        latency: LatencyModel {
            ttft: "60ms".parse().unwrap(),
            itl: "20ms".parse().unwrap(),
            tokens: "4".parse().unwrap(),
            ..Default::default()
        },
        ..Config::default()
    });
    let mut client = Client::connect(mock.local_addr()).await;
    let r = post(&mut client, body(true, 100), &[VERSION]).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.headers["content-type"],
        "text/event-stream; charset=utf-8"
    );
    assert!(r.headers.contains_key("request-id"));
    let events = named_events(&r.text());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let start = &events[0].1["message"];
    assert_eq!(start["model"], "claude-3-5-haiku-latest");
    assert_eq!(start["content"], json!([]));
    assert!(start["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(events[8].1["delta"]["stop_reason"], "end_turn");
    assert_eq!(events[8].1["usage"]["output_tokens"], 4);
    // The first delta leaves with message_start at the TTFT, the others 20 ms apart.
    let deltas: Vec<Duration> = r
        .frames
        .iter()
        .filter(|(_, b)| b.starts_with(b"event: content_block_delta"))
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(deltas.len(), 4, "one frame per event");
    // No event reaches the client before it is due (a frame cannot arrive before it is sent,
    // however late the client reads it). That the first is not held back with the last, due
    // 60 ms after it, only a host with a timer to measure by can tell: a busy one may hold the
    // mock or the client that long and deliver all four together.
    for (i, at) in deltas.iter().enumerate() {
        let due = Duration::from_millis(60 + 20 * i as u64);
        assert!(*at >= due, "delta {i} before {due:?}: {deltas:?}");
    }
    if gatebench_tests::precision_run() {
        assert!(deltas[0] < Duration::from_millis(110), "{deltas:?}");
    }
}

#[tokio::test]
async fn a_message_is_capped_by_max_tokens_and_errors_have_anthropics_shape() {
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let r = post(&mut client, body(false, 3), &[VERSION]).await;
    assert_eq!(r.status, 200);
    let m = r.json();
    assert_eq!(m["type"], "message");
    assert_eq!(m["stop_reason"], "max_tokens");
    assert_eq!(m["content"][0]["text"], "Hello from the");
    assert_eq!(m["usage"]["output_tokens"], 3);
    assert_eq!(r.headers["anthropic-ratelimit-requests-limit"], "4000");

    // The reset times are when the limits are whole again, in the next second: in the future,
    // as Anthropic's are, on both HTTP/1.1 servers and in streams.
    let hyper_mock = start_mock(Config {
        http1: mock_upstream::Http1Server::Hyper,
        ..Config::default()
    });
    let mut hyper_client = Client::connect(hyper_mock.local_addr()).await;
    for (stream, client) in [(false, &mut client), (true, &mut hyper_client)] {
        let before = std::time::SystemTime::now();
        let r = post(client, body(stream, 3), &[VERSION]).await;
        for what in ["requests", "tokens"] {
            let reset = &r.headers[format!("anthropic-ratelimit-{what}-reset").as_str()];
            let at = humantime::parse_rfc3339(reset.to_str().unwrap()).unwrap();
            assert!(at > before, "{reset:?} is not ahead of now");
            assert!(at < before + Duration::from_secs(3), "{reset:?}");
        }
    }

    type Headers<'a> = &'a [(&'a str, &'a str)];
    let cases: [(Value, Headers, &str); 4] = [
        (body(false, 3), &[], "anthropic-version: header is required"),
        (
            json!({"model": "m", "messages": []}),
            &[VERSION],
            "max_tokens: Field required",
        ),
        (
            json!({"max_tokens": 5, "messages": []}),
            &[VERSION],
            "model: Field required",
        ),
        (body(false, 0), &[VERSION], "greater than or equal to 1"),
    ];
    for (request, headers, message) in cases {
        let r = post(&mut client, request, headers).await;
        assert_eq!(r.status, 400, "{message}");
        let e = r.json();
        assert_eq!(e["type"], "error");
        assert_eq!(e["error"]["type"], "invalid_request_error");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(message),
            "{e}"
        );
        assert!(r.headers.contains_key("request-id"));
    }
    let r = client
        .send(Method::GET, "/v1/messages", &[VERSION], b"")
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.json()["type"], "error");
}

#[test]
fn loadgen_reads_anthropic_streams() {
    let mock = start_mock(Config::default());
    let dir = std::env::temp_dir().join(format!("gatebench-messages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("body.json");
    std::fs::write(&file, body(true, 8).to_string()).unwrap();
    // The verdict may be "invalid" on a loaded machine (the generator's lag); the counts may not.
    let (result, _) = run(
        LoadArgs {
            rate: Some("200".into()),
            duration: Some("1s".into()),
            request: loadgen::options::RequestFlags {
                body: Some(format!("@{}", file.display())),
                headers: vec!["anthropic-version: 2023-06-01".into()],
                ..Default::default()
            },
            ..args(format!("http://{}/v1/messages", mock.local_addr()))
        },
        vec![],
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let r = &result.runs[0];
    assert_eq!((r.ok, r.failed), (200, 0), "{:?}", r.errors);
    // Eight output events per stream, matching the usage in message_delta.
    assert_eq!(r.metrics["output_chunks"].p50, 8);
    assert_eq!(r.metrics["output_tokens"].p50, 8);
}
