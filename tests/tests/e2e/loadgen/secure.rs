//! loadgen over TLS (`https://`, `--cacert`, `--insecure`, `--connect-to`) and HTTP/2
//! (`--http2`: ALPN over TLS, prior knowledge in the clear), against the mock's TLS listener
//! and against hyper's own HTTP/2 server, which records what it was sent.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use gatebench_tests::h2c::{serve_connections, ANSWER};
use gatebench_tests::start_mock;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use loadgen::commands::run::run;
use loadgen::LoadArgs;

use gatebench_tests::load_args::args;
use gatebench_tests::schema::assert_matches;

/// A mock serving TLS for `names`, and the CA file it wrote (removed when dropped).
struct TlsMock {
    mock: mock_upstream::MockServer,
    ca: PathBuf,
}

impl TlsMock {
    fn start(names: &str) -> TlsMock {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let ca = std::env::temp_dir().join(format!(
            "gatebench-secure-{}-{}.pem",
            std::process::id(),
            NEXT.fetch_add(1, Relaxed)
        ));
        let config = mock_upstream::RawSettings {
            tls_names: Some(names.into()),
            tls_ca_file: Some(ca.display().to_string()),
            ..Default::default()
        }
        .validate()
        .unwrap();
        TlsMock {
            mock: start_mock(config),
            ca,
        }
    }

    fn port(&self) -> u16 {
        self.mock.local_addr().port()
    }
}

impl Drop for TlsMock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca);
    }
}

fn secure(url: String, ca: &TlsMock) -> LoadArgs {
    LoadArgs {
        cacert: Some(ca.ca.clone()),
        rate: Some("200".into()),
        duration: Some("1s".into()),
        connections: Some(4),
        ..args(url)
    }
}

#[test]
fn https_runs_against_the_mocks_tls_with_each_handshake_timed_apart() {
    let tls = TlsMock::start("localhost");
    let (result, _) = run(
        secure(
            format!("https://localhost:{}/v1/chat/completions", tls.port()),
            &tls,
        ),
        vec![],
    )
    .unwrap();
    assert_matches(&result, "result.schema.json");
    let r = &result.runs[0];
    assert_eq!(r.ok, 200, "{:?} {:?}", r.errors, r.validity.reasons);
    assert!(r.target.tls);
    assert_eq!(r.connect.protocol, "HTTP/1.1");
    assert!(r.connect.tls);
    assert_eq!(r.connect.body_timed_at, "socket_read");
    // One handshake per connection opened, and none in a request on a reused one.
    let handshakes = r
        .connect
        .tls_handshake_us
        .as_ref()
        .expect("handshakes timed");
    assert_eq!(handshakes.count, r.connections_opened);
    assert_eq!(r.connections_opened, 4);
    assert_eq!(r.connections_reused, 200);
    // The mock also saw loadgen's probes of what it is, on their own connections.
    assert!(tls.mock.metrics().connections_opened() >= 4);
}

#[test]
fn http2_over_tls_is_chosen_by_alpn_and_streams_are_timed() {
    let tls = TlsMock::start("localhost");
    let (result, _) = run(
        LoadArgs {
            http2: true,
            connections: Some(2),
            request: loadgen::options::RequestFlags {
                scenario: Some("chat-stream".into()),
                ..Default::default()
            },
            ..secure(
                format!("https://localhost:{}/v1/chat/completions", tls.port()),
                &tls,
            )
        },
        vec![],
    )
    .unwrap();
    assert_matches(&result, "result.schema.json");
    let r = &result.runs[0];
    assert_eq!(r.ok, 200, "{:?} {:?}", r.errors, r.validity.reasons);
    assert_eq!(r.connect.protocol, "HTTP/2");
    assert_eq!(r.connect.body_timed_at, "socket_read");
    assert_eq!(r.connections_opened, 2);
    // Every stream's events: 16 tokens each, their gaps and the time to the first.
    assert_eq!(r.metrics["output_tokens"].p50, 16);
    assert_eq!(r.metrics["itl"].count, 200 * 15);
    assert!(r.metrics["ttft"].p50 <= r.metrics["response_time"].p50);
    assert!(result.plan.transport.http2);
}

#[test]
fn connect_to_keeps_the_urls_name_for_sni_and_the_certificate() {
    // The certificate is for api.openai.com only: the handshake checks the URL's name, sent to
    // the address --connect-to gives, without any lookup of the name.
    let tls = TlsMock::start("api.openai.com");
    let pin = format!("api.openai.com:443:127.0.0.1:{}", tls.port());
    let (result, _) = run(
        LoadArgs {
            connect_to: vec![pin],
            ..secure("https://api.openai.com/v1/chat/completions".into(), &tls)
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 200, "{:?} {:?}", r.errors, r.validity.reasons);
    assert_eq!(r.target.resolved.port(), tls.port());
    assert_eq!(r.target.authority, "api.openai.com");
}

#[test]
fn an_untrusted_certificate_is_named_and_insecure_accepts_it() {
    let tls = TlsMock::start("localhost");
    let url = format!("https://localhost:{}/v1/chat/completions", tls.port());
    // Trusting the system's certificates only: the mock's CA is not among them.
    let (result, _) = run(
        LoadArgs {
            cacert: None,
            ..secure(url.clone(), &tls)
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    assert!(!result.valid);
    let reasons = r.validity.reasons.join("\n");
    assert!(reasons.contains("TLS with"), "{reasons}");
    assert!(
        reasons.contains("UnknownIssuer") || reasons.contains("no trusted certificates"),
        "{reasons}"
    );
    assert_eq!(r.ok, 0);

    let (result, _) = run(
        LoadArgs {
            cacert: None,
            insecure: true,
            ..secure(url, &tls)
        },
        vec![],
    )
    .unwrap();
    assert_eq!(result.runs[0].ok, 200, "{:?}", result.runs[0].errors);
}

#[test]
fn bad_tls_options_are_refused_before_any_load() {
    let tls = TlsMock::start("localhost");
    let url = format!("https://localhost:{}/v1/chat/completions", tls.port());
    let missing = run(
        LoadArgs {
            cacert: Some("/nonexistent/ca.pem".into()),
            ..secure(url.clone(), &tls)
        },
        vec![],
    )
    .unwrap_err()
    .to_string();
    assert!(
        missing.contains("--cacert /nonexistent/ca.pem"),
        "{missing}"
    );
    let pin = run(
        LoadArgs {
            connect_to: vec!["localhost:443".into()],
            ..secure(url, &tls)
        },
        vec![],
    )
    .unwrap_err()
    .to_string();
    assert!(pin.contains("HOST:PORT:ADDRESS:PORT"), "{pin}");
    assert_eq!(tls.mock.metrics().connections_opened(), 0);
}

/// One request as hyper's HTTP/2 server saw it: its connection, version, authority, sequence
/// number and body length.
type H2Seen = (u64, Version, String, u64, usize);

/// What hyper's HTTP/2 server saw: each request, and the connections it accepted.
#[derive(Debug, Default)]
struct H2Log {
    requests: Mutex<Vec<H2Seen>>,
    connections: AtomicU64,
}

/// hyper's HTTP/2-only server (prior knowledge), on its own thread and runtime.
fn start_h2c() -> (SocketAddr, Arc<H2Log>) {
    let log = Arc::new(H2Log::default());
    let record = log.clone();
    let addr = serve_connections(move |stream| {
        let connection = record.connections.fetch_add(1, Relaxed);
        let record = record.clone();
        let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let record = record.clone();
            async move {
                let version = request.version();
                let authority = request
                    .uri()
                    .authority()
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let seq = request
                    .headers()
                    .get("x-gatebench-seq")
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .unwrap_or(u64::MAX);
                let body = request.into_body().collect().await.unwrap().to_bytes();
                record.requests.lock().unwrap().push((
                    connection,
                    version,
                    authority,
                    seq,
                    body.len(),
                ));
                let response = Response::builder()
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from_static(ANSWER.as_bytes())))
                    .unwrap();
                Ok::<_, Infallible>(response)
            }
        });
        async move {
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    });
    (addr, log)
}

#[test]
fn h2c_multiplexes_every_request_over_the_connections_asked_for() {
    let (addr, log) = start_h2c();
    let planned = LoadArgs {
        http2: true,
        concurrency: Some(16),
        requests: Some(400),
        connections: Some(2),
        ..args(format!("http://{addr}/v1/chat/completions"))
    };
    // The body every request carries (a result records only its CRC-32).
    let body_len = planned.clone().plan().unwrap().request.body.len();
    let (result, _) = run(planned, vec![]).unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 400, "{:?} {:?}", r.errors, r.validity.reasons);
    assert_eq!(r.connect.protocol, "HTTP/2");
    assert!(!r.connect.tls);
    // 16 requests in flight on 2 connections: streams, not connections. (loadgen's probes of
    // what the target is speak HTTP/1.1 on connections of their own, which this server drops.)
    let seen = log.requests.lock().unwrap();
    assert!(seen.len() >= 400);
    let mut carriers: Vec<u64> = seen.iter().map(|s| s.0).collect();
    carriers.sort_unstable();
    carriers.dedup();
    assert_eq!(carriers.len(), 2, "{carriers:?}");
    for (_, version, authority, seq, len) in seen.iter() {
        assert_eq!(*version, Version::HTTP_2);
        assert_eq!(authority, &addr.to_string());
        assert_ne!(*seq, u64::MAX);
        assert_eq!(*len, body_len);
    }
    let mut seqs: Vec<u64> = seen.iter().map(|s| s.3).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), seen.len(), "each request its own number");
}

#[test]
fn h2c_streams_reach_the_mock_on_its_plain_port() {
    let mock = start_mock(mock_upstream::Config::default());
    let (result, _) = run(
        LoadArgs {
            http2: true,
            rate: Some("200".into()),
            duration: Some("1s".into()),
            connections: Some(2),
            request: loadgen::options::RequestFlags {
                scenario: Some("chat-stream".into()),
                ..Default::default()
            },
            ..args(gatebench_tests::load_args::url(&mock))
        },
        vec![],
    )
    .unwrap();
    assert_matches(&result, "result.schema.json");
    let r = &result.runs[0];
    assert_eq!(r.ok, 200, "{:?} {:?}", r.errors, r.validity.reasons);
    assert_eq!(r.connect.protocol, "HTTP/2");
    assert_eq!(r.connections_opened, 2);
    assert_eq!(r.metrics["itl"].count, 200 * 15);
    assert_eq!(
        mock.metrics()
            .requests(mock_upstream::RouteKind::ChatStream),
        200
    );
}
