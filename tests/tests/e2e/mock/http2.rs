//! loadgen's HTTP/2 client against hyper's HTTP/2 server made to misbehave: streams it resets,
//! a stream limit below the streams in flight, and a connection it drops with streams open.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use gatebench_tests::h2c::{serve_connections, ANSWER};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use loadgen::commands::run::run;
use loadgen::LoadArgs;
use tokio::sync::Notify;

use gatebench_tests::load_args::args;

/// How the server misbehaves.
#[derive(Debug, Clone, Copy, Default)]
struct Faults {
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    max_streams: Option<u32>,
    /// Streams whose `x-gatebench-seq` is this modulo 10 are reset (`INTERNAL_ERROR`).
    reset_seq_mod_10: Option<u64>,
    /// The request with this number has its whole connection dropped, its other streams too.
    drop_connection_at: Option<u64>,
    /// The request with this number has its connection shut down gracefully: a GOAWAY, the
    /// streams already open answered.
    go_away_at: Option<u64>,
    /// How long each answer is held, so that streams overlap.
    hold: Duration,
}

/// What the server saw: requests, and the most streams open at once. (loadgen's probes of what
/// the target is speak HTTP/1.1 on connections of their own, which this server drops, so its
/// connections are not counted here.)
#[derive(Debug, Default)]
struct Seen {
    requests: AtomicU64,
    open: AtomicU64,
    most_open: AtomicU64,
}

/// hyper's HTTP/2-only server (prior knowledge) with `faults`, on its own thread and runtime.
fn start(faults: Faults) -> (SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let record = seen.clone();
    let addr = serve_connections(move |stream| {
        let (drop_it, go_away) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let service = {
            let (record, drop_it, go_away) = (record.clone(), drop_it.clone(), go_away.clone());
            hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                let (record, drop_it, go_away) = (record.clone(), drop_it.clone(), go_away.clone());
                async move { answer(request, faults, &record, (&drop_it, &go_away)).await }
            })
        };
        async move {
            let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            if let Some(max) = faults.max_streams {
                builder.max_concurrent_streams(max);
            }
            let serving = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(serving);
            tokio::select! {
                _ = serving.as_mut() => {}
                () = drop_it.notified() => {}
                () = go_away.notified() => {
                    serving.as_mut().graceful_shutdown();
                    let _ = serving.await;
                }
            }
        }
    });
    (addr, seen)
}

async fn answer(
    request: Request<hyper::body::Incoming>,
    faults: Faults,
    seen: &Seen,
    (drop_it, go_away): (&Notify, &Notify),
) -> Result<Response<Full<Bytes>>, &'static str> {
    seen.requests.fetch_add(1, Relaxed);
    let open = seen.open.fetch_add(1, Relaxed) + 1;
    seen.most_open.fetch_max(open, Relaxed);
    let seq: u64 = request
        .headers()
        .get("x-gatebench-seq")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(u64::MAX);
    let _ = request.into_body().collect().await;
    tokio::time::sleep(faults.hold).await;
    seen.open.fetch_sub(1, Relaxed);
    if faults.drop_connection_at == Some(seq) {
        drop_it.notify_one();
        // The connection's task ends first, this stream with it.
        std::future::pending::<()>().await;
    }
    if faults.go_away_at == Some(seq) {
        go_away.notify_one();
        // Held long after the GOAWAY: the connection lives on for it, and takes no new stream.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if faults.reset_seq_mod_10 == Some(seq % 10) {
        // A service error: hyper resets the stream.
        return Err("reset on purpose");
    }
    Ok(Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(ANSWER.as_bytes())))
        .unwrap())
}

fn h2_args(addr: SocketAddr, connections: usize, concurrency: usize) -> LoadArgs {
    LoadArgs {
        http2: true,
        concurrency: Some(concurrency),
        requests: Some(400),
        connections: Some(connections),
        threads: Some(1),
        ..args(format!("http://{addr}/v1/chat/completions"))
    }
}

#[test]
fn streams_the_server_resets_are_counted_as_resets_and_the_connection_lives_on() {
    let (addr, seen) = start(Faults {
        reset_seq_mod_10: Some(3),
        ..Faults::default()
    });
    let (result, _) = run(h2_args(addr, 2, 16), vec![]).unwrap();
    let r = &result.runs[0];
    let resets = r.errors.get("reset").copied().unwrap_or(0);
    // Requests 0-399, one in ten reset.
    assert_eq!(r.ok + resets, 400, "{:?}", r.errors);
    assert_eq!(resets, 40, "{:?}", r.errors);
    // A reset ends a stream, not its connection.
    assert_eq!(r.connections_opened, 2);
    assert!(seen.requests.load(Relaxed) >= 400);
}

#[test]
fn streams_over_the_servers_limit_wait_for_a_free_one() {
    let (addr, seen) = start(Faults {
        max_streams: Some(4),
        hold: Duration::from_millis(2),
        ..Faults::default()
    });
    let (result, _) = run(h2_args(addr, 1, 16), vec![]).unwrap();
    let r = &result.runs[0];
    assert_eq!(r.ok, 400, "{:?} {:?}", r.errors, r.validity.reasons);
    assert_eq!(r.connections_opened, 1);
    let most = seen.most_open.load(Relaxed);
    assert!(most <= 4, "{most} streams open at once, the limit is 4");
    assert!(most >= 2, "streams were multiplexed ({most} at most)");
}

#[test]
fn a_dropped_connection_resets_its_streams_and_the_next_requests_open_another() {
    let (addr, seen) = start(Faults {
        drop_connection_at: Some(150),
        hold: Duration::from_millis(1),
        ..Faults::default()
    });
    let (result, _) = run(h2_args(addr, 1, 8), vec![]).unwrap();
    let r = &result.runs[0];
    let resets = r.errors.get("reset").copied().unwrap_or(0);
    assert_eq!(r.ok + resets, 400, "{:?}", r.errors);
    // The stream that asked for the drop, and those beside it on the connection (8 at most).
    assert!(
        (1..=8).contains(&resets),
        "{resets} resets: {:?}, {} opened",
        r.errors,
        r.connections_opened
    );
    assert_eq!(r.connections_opened, 2, "one connection reopened");
    // Every request answered reached the server; a request written as the server dropped the
    // connection may not have, and is among the resets.
    assert!(seen.requests.load(Relaxed) >= r.ok);
}

#[test]
fn a_connection_told_to_go_away_finishes_its_streams_and_the_next_go_on_a_new_one() {
    let (addr, seen) = start(Faults {
        go_away_at: Some(150),
        hold: Duration::from_millis(5),
        ..Faults::default()
    });
    let (result, _) = run(h2_args(addr, 1, 8), vec![]).unwrap();
    let r = &result.runs[0];
    // The streams open at the GOAWAY are answered, the one held 200 ms too; none after it is
    // sent there.
    assert_eq!(r.ok, 400, "{:?}", r.errors);
    assert_eq!(
        r.connections_opened, 2,
        "one connection opened after the GOAWAY"
    );
    assert!(seen.requests.load(Relaxed) >= 400);
}
