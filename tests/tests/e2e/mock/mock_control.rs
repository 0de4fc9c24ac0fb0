//! What `loadgen behaviour` reads of the mock: `--name` and the echoed `x-gatebench-seq` on
//! every answer, `--record N` at `GET /v1/gatebench/record`, and `--control ADDR`, the loopback
//! listener that steers faults, latency and refusals during a run.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use gatebench_tests::{chat_body, start_mock, Client};
use hyper::Method;
use mock_upstream::{Config, Http1Server, MockServer};
use serde_json::{json, Value};

fn named(name: &str, server: Http1Server) -> Config {
    Config {
        name: Some(name.to_string()),
        http1: server,
        ..Config::default()
    }
}

fn controlled(record: usize, threads: usize) -> MockServer {
    controlled_by(record, threads, Http1Server::Own)
}

fn controlled_by(record: usize, threads: usize, http1: Http1Server) -> MockServer {
    start_mock(Config {
        record,
        threads,
        http1,
        control: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        ..Config::default()
    })
}

/// `GET` or `POST` `path` on `addr`, the answer's status and JSON body.
async fn call(addr: SocketAddr, method: Method, path: &str, body: &str) -> (u16, Value) {
    let mut client = Client::connect(addr).await;
    let r = client
        .send(
            method,
            path,
            &[("content-type", "application/json")],
            body.as_bytes(),
        )
        .await;
    (r.status.as_u16(), r.json())
}

/// Posts a steered state to the control listener; its answer.
async fn steer(mock: &MockServer, body: &str) -> Value {
    let control = mock.control_addr().unwrap();
    let (status, state) = call(control, Method::POST, "/v1/gatebench/control", body).await;
    assert_eq!(status, 200, "{state}");
    state
}

/// A chat request on a connection of its own; its status.
async fn chat_status(addr: SocketAddr) -> u16 {
    let mut client = Client::connect(addr).await;
    client
        .chat(&chat_body(false, json!({})), &[])
        .await
        .status
        .as_u16()
}

/// Polls `done` every 20 ms for up to `within`; whether it came true.
async fn eventually(within: Duration, mut done: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The top 32 bits of FNV-1a 64, as 8 hex digits: how the record names a key.
fn key_id(key: &str) -> String {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{:08x}", hash >> 32)
}

#[tokio::test]
async fn every_answer_names_the_mock_and_echoes_the_seq() {
    for server in [Http1Server::Own, Http1Server::Hyper] {
        let mock = start_mock(named("up-a", server));
        let mut client = Client::connect(mock.local_addr()).await;
        let cases = [
            (
                chat_body(false, json!({})),
                vec![("x-gatebench-seq", "7")],
                200,
            ),
            (
                chat_body(true, json!({})),
                vec![("x-gatebench-seq", "8"), ("x-mock-status", "503")],
                503,
            ),
            (
                chat_body(false, json!({"model": 5})),
                vec![("x-gatebench-seq", "9")],
                400,
            ),
        ];
        for (body, headers, status) in cases {
            let r = client.chat(&body, &headers).await;
            assert_eq!(r.status, status, "{server:?}");
            assert_eq!(r.headers["x-gatebench-upstream"], "up-a", "{server:?}");
            assert_eq!(
                r.headers["x-gatebench-seq-seen"], headers[0].1,
                "{server:?}"
            );
        }
        for path in ["/health", "/metrics", "/nowhere"] {
            let r = client.send(Method::GET, path, &[], b"").await;
            assert_eq!(r.headers["x-gatebench-upstream"], "up-a", "{path}");
            assert!(!r.headers.contains_key("x-gatebench-seq-seen"), "{path}");
        }
    }
    // Without --name, the seq is echoed all the same.
    let mock = start_mock(Config::default());
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client
        .chat(&chat_body(false, json!({})), &[("x-gatebench-seq", "41")])
        .await;
    assert!(!r.headers.contains_key("x-gatebench-upstream"));
    assert_eq!(r.headers["x-gatebench-seq-seen"], "41");
}

#[tokio::test]
async fn the_record_lists_arrivals_and_counts_what_fell_out() {
    let mock = start_mock(Config {
        record: 3,
        name: Some("rec".into()),
        ..Config::default()
    });
    let addr = mock.local_addr();
    let mut client = Client::connect(addr).await;
    for seq in 0..4 {
        let seq = seq.to_string();
        let user = format!("user-{seq}");
        let mut headers = vec![
            ("x-gatebench-seq", seq.as_str()),
            ("authorization", "Bearer sk-a"),
        ];
        if seq == "3" {
            headers.push(("x-mock-status", "503"));
        }
        let r = client
            .chat(&chat_body(false, json!({"user": user})), &headers)
            .await;
        assert_eq!(r.status, if seq == "3" { 503 } else { 200 });
    }
    let body = serde_json::to_vec(&json!({
        "model": "claude-x", "max_tokens": 5, "metadata": {"user_id": "anthropic-user"},
        "messages": [{"role": "user", "content": "hi"}]
    }))
    .unwrap();
    let r = client
        .send(
            Method::POST,
            "/v1/messages",
            &[("anthropic-version", "2023-06-01"), ("x-api-key", "sk-b")],
            &body,
        )
        .await;
    assert_eq!(r.status, 200);
    // Routes that are no API are not recorded.
    client.send(Method::GET, "/health", &[], b"").await;

    let (status, record) = call(addr, Method::GET, "/v1/gatebench/record", "").await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(record["name"], "rec");
    assert_eq!(
        (record["next"].as_u64(), record["dropped"].as_u64()),
        (Some(5), Some(2))
    );
    let arrivals = record["arrivals"].as_array().unwrap();
    let seen: Vec<(u64, Value, Value, Value, Value, u64)> = arrivals
        .iter()
        .map(|a| {
            (
                a["i"].as_u64().unwrap(),
                a["seq"].clone(),
                a["user"].clone(),
                a["key"].clone(),
                a["route"].clone(),
                a["status"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                2,
                json!(2),
                json!("user-2"),
                json!(key_id("sk-a")),
                json!("chat"),
                200
            ),
            (
                3,
                json!(3),
                json!("user-3"),
                json!(key_id("sk-a")),
                json!("chat"),
                503
            ),
            (
                4,
                Value::Null,
                json!("anthropic-user"),
                json!(key_id("sk-b")),
                json!("messages"),
                200
            ),
        ]
    );
    assert!(arrivals.iter().all(|a| a["cut"] == false));
    let (started, now) = (
        record["started_ns"].as_u64().unwrap(),
        record["now_ns"].as_u64().unwrap(),
    );
    for a in arrivals {
        let t = a["t_ns"].as_u64().unwrap();
        assert!(started <= t && t <= now, "{a}");
    }
    // Every arrival counted per second, those out of the ring too.
    let mut by_status = std::collections::BTreeMap::<String, u64>::new();
    for second in record["per_second"].as_array().unwrap() {
        for (status, n) in second["by_status"].as_object().unwrap() {
            *by_status.entry(status.clone()).or_default() += n.as_u64().unwrap();
        }
    }
    assert_eq!(
        by_status,
        [("200".to_string(), 4), ("503".to_string(), 1)].into()
    );

    let (_, later) = call(addr, Method::GET, "/v1/gatebench/record?since=4", "").await;
    assert_eq!(
        (
            later["dropped"].as_u64(),
            later["arrivals"].as_array().unwrap().len()
        ),
        (Some(0), 1)
    );
    let (_, from_1) = call(addr, Method::GET, "/v1/gatebench/record?since=1", "").await;
    assert_eq!(
        (
            from_1["dropped"].as_u64(),
            from_1["arrivals"].as_array().unwrap().len()
        ),
        (Some(1), 3)
    );
    let (status, bad) = call(addr, Method::GET, "/v1/gatebench/record?since=x", "").await;
    assert_eq!((status, &bad["error"]["param"]), (400, &json!("since")));

    // Without --record, the route says how to turn it on.
    let plain = start_mock(Config::default());
    let (status, off) = call(plain.local_addr(), Method::GET, "/v1/gatebench/record", "").await;
    assert_eq!(status, 409);
    assert!(
        off["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--record N"),
        "{off}"
    );
}

#[tokio::test]
async fn a_stream_cut_on_purpose_is_recorded_as_cut() {
    let mock = start_mock(Config {
        record: 8,
        ..Config::default()
    });
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client
        .chat(&chat_body(true, json!({})), &[("x-mock-fault", "close@2")])
        .await;
    assert_eq!(r.status, 200);
    let (_, record) = call(mock.local_addr(), Method::GET, "/v1/gatebench/record", "").await;
    assert_eq!(record["arrivals"][0]["cut"], true, "{record}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steered_faults_apply_at_once_and_end_after_for_ms() {
    let mock = controlled(64, 1);
    let addr = mock.local_addr();
    // Taken before the POST, so before the mock's since_ns: the state cannot end sooner than
    // for_ms after it. The requests below take milliseconds; seconds of for_ms cover any host.
    let posted = Instant::now();
    let state = steer(&mock, r#"{"faults": ["503:100%"], "for_ms": 3000}"#).await;
    assert_eq!(
        (&state["steered"], &state["in_force"]),
        (&json!(true), &json!(true)),
        "{state}"
    );
    assert_eq!(state["faults"], json!(["503:100%"]));
    let lasts = state["until_ns"].as_u64().unwrap() - state["since_ns"].as_u64().unwrap();
    assert_eq!(lasts, 3_000_000_000, "{state}");

    // Each provider's shape, as the configured faults are answered.
    let mut client = Client::connect(addr).await;
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert_eq!(r.status, 503, "{:?} after the POST", posted.elapsed());
    assert_eq!(r.json()["error"]["type"], "server_error");
    let body = serde_json::to_vec(&json!({
        "model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]
    }))
    .unwrap();
    let r = client
        .send(
            Method::POST,
            "/v1/messages",
            &[("anthropic-version", "2023-06-01")],
            &body,
        )
        .await;
    assert_eq!(r.status, 503, "{:?} after the POST", posted.elapsed());
    assert_eq!(r.json()["type"], "error");

    // Back to the start-up configuration once its time is up.
    let control = mock.control_addr().unwrap();
    let reverted = eventually(Duration::from_secs(20), async || {
        let (_, state) = call(control, Method::GET, "/v1/gatebench/control", "").await;
        state["steered"] == false && state["in_force"] == false
    })
    .await;
    assert!(reverted, "the steered state never ended");
    assert!(
        posted.elapsed() >= Duration::from_millis(3000),
        "{:?}",
        posted.elapsed()
    );
    assert_eq!(chat_status(addr).await, 200);

    let (_, metrics) = {
        let mut client = Client::connect(control).await;
        let r = client.send(Method::GET, "/metrics", &[], b"").await;
        (r.status, r.text())
    };
    assert!(
        metrics.contains("mock_control_changes_total 1\n"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steered_latency_and_later_states_and_resets() {
    let mock = controlled(0, 1);
    let addr = mock.local_addr();
    // A latency long enough that, left in force, it would show on any host.
    let state = steer(&mock, r#"{"latency": "2s"}"#).await;
    assert_eq!(
        (&state["latency"], &state["until_ns"]),
        (&json!("2s"), &Value::Null)
    );
    let sent = Instant::now();
    assert_eq!(chat_status(addr).await, 200);
    assert!(
        sent.elapsed() >= Duration::from_millis(1995),
        "{:?}",
        sent.elapsed()
    );

    // A state for later replaces the one in force at once, and leaves the configuration in
    // force until then.
    let state = steer(&mock, r#"{"faults": ["429:100%"], "after_ms": 60000}"#).await;
    assert_eq!(
        (&state["steered"], &state["in_force"], &state["latency"]),
        (&json!(true), &json!(false), &Value::Null)
    );
    // Well under the 2 s the replaced state would take (seconds no busy host adds to an
    // instant answer), and near instant where the timer is sure.
    let sent = Instant::now();
    assert_eq!(chat_status(addr).await, 200);
    let bound = gatebench_tests::upper_bound(Duration::from_millis(250), Duration::from_secs(1));
    assert!(sent.elapsed() < bound, "{:?}", sent.elapsed());

    let control = mock.control_addr().unwrap();
    let (status, state) = call(control, Method::POST, "/v1/gatebench/control/reset", "").await;
    assert_eq!(status, 200);
    assert_eq!(
        (&state["steered"], &state["changes"]),
        (&json!(false), &json!(3))
    );

    // Record is served on the control listener too: here it is off.
    let (status, _) = call(control, Method::GET, "/v1/gatebench/record", "").await;
    assert_eq!(status, 409);
}

/// Sends a chat request on `tcp`; whether an answer came back before the connection ended.
fn answered(tcp: &mut TcpStream) -> bool {
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: m\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    if tcp.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut buf = [0u8; 4096];
    matches!(tcp.read(&mut buf), Ok(n) if n > 0 && buf.starts_with(b"HTTP/1.1 200"))
}

fn connect(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    tcp.set_read_timeout(Some(Duration::from_secs(5)))?;
    Ok(tcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuse_closes_the_listener_and_drops_open_connections_until_it_ends() {
    // Two workers, each with a listener of its own on the port (SO_REUSEPORT).
    let mock = controlled(16, 2);
    let addr = mock.local_addr();
    let control = mock.control_addr().unwrap();
    let mut open = connect(addr).unwrap();
    assert!(answered(&mut open));

    let state = steer(&mock, r#"{"refuse": true, "for_ms": 1500}"#).await;
    assert_eq!(state["refuse"], true);
    let refused = eventually(Duration::from_secs(5), async || connect(addr).is_err()).await;
    assert!(refused, "new connections were still accepted");
    assert!(
        !answered(&mut open),
        "an open connection was answered while refusing"
    );
    // The control listener still answers, record and all.
    let (status, record) = call(control, Method::GET, "/v1/gatebench/record", "").await;
    assert_eq!((status, record["next"].as_u64()), (200, Some(1)));

    // Listening again once for_ms is over.
    let reopened = eventually(Duration::from_secs(10), async || {
        connect(addr).is_ok_and(|mut tcp| answered(&mut tcp))
    })
    .await;
    assert!(reopened, "the listener never reopened");

    // Until reset, without for_ms; hyper's server drops its connections too.
    let mut hyper_open = {
        let hyper = controlled_by(0, 1, Http1Server::Hyper);
        let mut tcp = connect(hyper.local_addr()).unwrap();
        assert!(answered(&mut tcp));
        steer(&hyper, r#"{"refuse": true}"#).await;
        assert!(
            !answered(&mut tcp),
            "hyper's server answered while refusing"
        );
        tcp
    };
    assert!(!answered(&mut hyper_open));
    steer(&mock, r#"{"refuse": true}"#).await;
    assert!(eventually(Duration::from_secs(5), async || connect(addr).is_err()).await);
    let (status, state) = call(control, Method::POST, "/v1/gatebench/control/reset", "").await;
    assert_eq!((status, &state["refuse"]), (200, &json!(false)));
    let reopened = eventually(Duration::from_secs(5), async || {
        connect(addr).is_ok_and(|mut tcp| answered(&mut tcp))
    })
    .await;
    assert!(reopened, "reset did not reopen the listener");
}

#[tokio::test]
async fn bad_control_bodies_are_400s_that_name_the_field() {
    let mock = controlled(0, 1);
    let control = mock.control_addr().unwrap();
    for (body, field) in [
        (r#"{"faults": ["503:100"]}"#, "faults"),
        (r#"{"latency": "soon"}"#, "latency"),
        (r#"{"ttft": 20}"#, "ttft"),
        (r#"{"refuse": "yes"}"#, "refuse"),
        (r#"{"after_ms": -5}"#, "after_ms"),
        (r#"{"colour": "red"}"#, "colour"),
        ("not json", "body"),
    ] {
        let (status, error) = call(control, Method::POST, "/v1/gatebench/control", body).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(error["error"]["param"], field, "{body}: {error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(field) && message.contains("expected"),
            "{message}"
        );
    }
    let (_, state) = call(control, Method::GET, "/v1/gatebench/control", "").await;
    assert_eq!(
        (&state["steered"], &state["changes"]),
        (&json!(false), &json!(0))
    );
}

#[tokio::test]
async fn the_control_routes_are_409_on_the_main_listener() {
    for mock in [start_mock(Config::default()), controlled(0, 1)] {
        for (method, path) in [
            (Method::POST, "/v1/gatebench/control"),
            (Method::GET, "/v1/gatebench/control"),
            (Method::POST, "/v1/gatebench/control/reset"),
        ] {
            let (status, error) = call(mock.local_addr(), method, path, "{}").await;
            assert_eq!(status, 409, "{path}");
            let message = error["error"]["message"].as_str().unwrap();
            assert!(message.contains("--control 127.0.0.1:PORT"), "{message}");
        }
    }
}

#[test]
fn a_control_address_that_is_not_loopback_is_refused_at_start() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_e2e-mock"))
        .args(["--listen", "127.0.0.1:0", "--control", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid --control '0.0.0.0:0': expected a loopback address"),
        "{stderr}"
    );
}
