//! The HTTP/2 client against a server nobody here wrote (the `h2` crate's, over an in-memory
//! pipe), and against frames written by hand for what that server never sends.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use gatebench_shared::clock::{RECEIVED_HEADER, STARTED_HEADER};
use gatebench_shared::wire::SEQ_HEADER;
use h2::server::SendResponse;
use h2::RecvStream;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, Request, Response};
use tokio::io::DuplexStream;

use super::connection::{Conn, ConnError, Failed, CONNECTION_WINDOW, MAX_QUEUED_ANSWERS};
use super::driver::drive;
use super::exchange::{exchange_on, Sent};
use super::frame::{self, code, flag, kind};
use super::hpack::put_literal;
use super::{slot_of, RequestTemplate};
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::{parse_target, RequestSpec};

const ANSWER: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#;

fn run<F: Future>(work: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    tokio::task::LocalSet::new().block_on(&rt, work)
}

fn spec(body: Bytes) -> RequestSpec {
    RequestSpec {
        scenario: "chat".into(),
        stream: false,
        body,
        max_tokens: None,
        headers: vec![(
            HeaderName::from_static("authorization"),
            HeaderValue::from_static("Bearer k"),
        )],
    }
}

/// A client connection to a server that hands each request to `handle`, on its own task.
async fn connect<H, F>(builder: h2::server::Builder, handle: H) -> Rc<RefCell<Conn>>
where
    H: Fn(Request<RecvStream>, SendResponse<Bytes>) -> F + 'static,
    F: Future<Output = ()> + 'static,
{
    connect_through(1 << 20, builder, handle).await
}

/// [`connect`] through a pipe that holds `room` octets each way.
async fn connect_through<H, F>(
    room: usize,
    builder: h2::server::Builder,
    handle: H,
) -> Rc<RefCell<Conn>>
where
    H: Fn(Request<RecvStream>, SendResponse<Bytes>) -> F + 'static,
    F: Future<Output = ()> + 'static,
{
    let (client, server) = tokio::io::duplex(room);
    tokio::task::spawn_local(serve(builder, server, handle));
    let conn = Rc::new(RefCell::new(Conn::new()));
    tokio::task::spawn_local(drive(conn.clone(), client));
    poll_fn(|cx| conn.borrow_mut().poll_settled(cx))
        .await
        .expect("the server's SETTINGS");
    conn
}

async fn serve<H, F>(builder: h2::server::Builder, io: DuplexStream, handle: H)
where
    H: Fn(Request<RecvStream>, SendResponse<Bytes>) -> F + 'static,
    F: Future<Output = ()> + 'static,
{
    let mut server = builder.handshake::<_, Bytes>(io).await.expect("handshake");
    while let Some(Ok((request, respond))) = server.accept().await {
        tokio::task::spawn_local(handle(request, respond));
    }
}

/// Request `seq` of `template` on `conn`.
async fn send(
    conn: &RefCell<Conn>,
    template: &RequestTemplate,
    spec: &RequestSpec,
    seq: u64,
) -> Result<Exchange, Failed> {
    let clock = RunClock::starting_in(std::time::Duration::ZERO);
    let slot = Slot {
        index: seq,
        due_ns: 0,
        dispatched_ns: 0,
        keep_answer: false,
        lane: None,
    };
    let at = Sent {
        sent_ns: 0,
        target_wait_ns: 0,
    };
    exchange_on(conn, template, spec, &clock, slot, at).await
}

/// Requests 0 to `n` on `conn`, each on a task of its own.
fn send_all(
    conn: &Rc<RefCell<Conn>>,
    template: &RequestTemplate,
    spec: &RequestSpec,
    n: u64,
) -> Vec<tokio::task::JoinHandle<Result<Exchange, Failed>>> {
    (0..n)
        .map(|seq| {
            let (conn, template, spec) = (conn.clone(), template.clone(), spec.clone());
            tokio::task::spawn_local(async move { send(&conn, &template, &spec, seq).await })
        })
        .collect()
}

/// Answers with the mock's head and the completion, in two DATA frames split at `at`.
fn answer(mut respond: SendResponse<Bytes>, at: usize) {
    let mut sending = respond.send_response(ok_head(), false).expect("head");
    let (a, b) = ANSWER.split_at(at);
    sending
        .send_data(Bytes::from_static(a.as_bytes()), false)
        .expect("data");
    sending
        .send_data(Bytes::from_static(b.as_bytes()), true)
        .expect("data");
}

fn template_for(spec: &RequestSpec) -> RequestTemplate {
    let target = parse_target("https://localhost:8443/v1/chat/completions").expect("target");
    RequestTemplate::post_to(&target, "/v1/chat/completions", spec)
}

/// Reads a request's whole body, giving its bytes back to the window.
async fn body_of(request: Request<RecvStream>) -> (hyper::http::request::Parts, Vec<u8>) {
    let (parts, mut body) = request.into_parts();
    let mut all = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.expect("body");
        let _ = body.flow_control().release_capacity(chunk.len());
        all.extend_from_slice(&chunk);
    }
    (parts, all)
}

fn ok_head() -> Response<()> {
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .header(RECEIVED_HEADER, "1000")
        .header(STARTED_HEADER, "2000")
        .body(())
        .expect("response")
}

#[test]
fn streams_carry_the_head_and_body_the_server_reads() {
    run(async {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let log = seen.clone();
        let conn = connect(h2::server::Builder::new(), move |request, respond| {
            let log = log.clone();
            async move {
                let (parts, body) = body_of(request).await;
                assert_eq!(parts.method, "POST");
                assert_eq!(
                    parts.uri.to_string(),
                    "https://localhost:8443/v1/chat/completions"
                );
                let h = &parts.headers;
                assert_eq!(h["content-type"], "application/json");
                assert_eq!(h["authorization"], "Bearer k");
                assert_eq!(h["content-length"], "7");
                assert_eq!(body, b"{\"a\":1}");
                log.borrow_mut()
                    .push(h[SEQ_HEADER].to_str().expect("seq").to_owned());
                answer(respond, 40);
            }
        })
        .await;
        let spec = spec(Bytes::from_static(b"{\"a\":1}"));
        let template = template_for(&spec);
        let requests = send_all(&conn, &template, &spec, 40);
        for request in requests {
            let x = request.await.expect("task").expect("answered");
            let times = x.mock_times.expect("the mock's times");
            assert_eq!((times.received_ns, times.started_ns), (1000, 2000));
            assert!(x.first_byte_ns.is_some());
        }
        let mut seen = seen.borrow().clone();
        seen.sort_by_key(|s| s.parse::<u64>().expect("number"));
        assert_eq!(seen, (0..40).map(|n| n.to_string()).collect::<Vec<_>>());
    });
}

#[test]
fn headers_http2_forbids_are_left_out_and_host_names_the_authority() {
    run(async {
        let conn = connect(h2::server::Builder::new(), |request, respond| async move {
            let (parts, _) = body_of(request).await;
            assert_eq!(
                parts.uri.authority().map(|a| a.as_str()),
                Some("api.openai.com")
            );
            let h = &parts.headers;
            for gone in ["connection", "x-hop", "te", "host"] {
                assert!(!h.contains_key(gone), "{gone}");
            }
            assert_eq!(h["content-length"], "2", "the body's, not the user's");
            let types: Vec<_> = h.get_all("content-type").iter().collect();
            assert_eq!(types, ["text/plain"], "the user's, alone");
            answer(respond, 0);
        })
        .await;
        let mut spec = spec(Bytes::from_static(b"{}"));
        for (name, value) in [
            ("connection", "keep-alive, x-hop"),
            ("x-hop", "1"),
            ("te", "gzip"),
            ("content-length", "999"),
            ("host", "api.openai.com"),
            ("content-type", "text/plain"),
        ] {
            spec.headers.push((
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            ));
        }
        let template = template_for(&spec);
        assert!(send(&conn, &template, &spec, 0).await.is_ok());
    });
}

#[test]
fn the_servers_stream_limit_is_kept() {
    run(async {
        let (open, most) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let (o, m) = (open.clone(), most.clone());
        let mut builder = h2::server::Builder::new();
        builder.max_concurrent_streams(3);
        let conn = connect(builder, move |request, respond| {
            let (open, most) = (o.clone(), m.clone());
            async move {
                open.set(open.get() + 1);
                most.set(most.get().max(open.get()));
                let _ = body_of(request).await;
                for _ in 0..20 {
                    tokio::task::yield_now().await;
                }
                open.set(open.get() - 1);
                answer(respond, 0);
            }
        })
        .await;
        let spec = spec(Bytes::new());
        let template = template_for(&spec);
        let requests = send_all(&conn, &template, &spec, 30);
        for request in requests {
            request.await.expect("task").expect("answered");
        }
        assert_eq!(most.get(), 3, "streams open at once on the server");
    });
}

#[test]
fn bodies_longer_than_the_windows_go_both_ways() {
    run(async {
        let long_answer = ANSWER.replace("Hi.", &"x".repeat(3 << 20));
        let answer = Bytes::from(long_answer.clone());
        let conn = connect(h2::server::Builder::new(), move |request, mut respond| {
            let answer = answer.clone();
            async move {
                let (_, body) = body_of(request).await;
                assert_eq!(body.len(), 300_000);
                let mut sending = respond.send_response(ok_head(), false).expect("head");
                let mut rest = answer;
                // Sent as the client's windows allow.
                while !rest.is_empty() {
                    sending.reserve_capacity(rest.len());
                    let room = poll_fn(|cx| sending.poll_capacity(cx))
                        .await
                        .expect("capacity")
                        .expect("window");
                    let chunk = rest.split_to(room.min(rest.len()));
                    sending.send_data(chunk, rest.is_empty()).expect("data");
                }
            }
        })
        .await;
        let spec = spec(Bytes::from(vec![b'a'; 300_000]));
        let template = template_for(&spec);
        let x = send(&conn, &template, &spec, 0).await.expect("answered");
        assert!(x.first_byte_ns.is_some());
        // The connection goes on.
        let again = send(&conn, &template, &spec, 1).await;
        assert!(again.is_ok());
    });
}

#[test]
fn a_body_held_by_its_own_window_lets_the_others_go() {
    run(async {
        const N: usize = 4;
        let done = Rc::new(Cell::new(0));
        let counted = done.clone();
        let mut builder = h2::server::Builder::new();
        // Room on the connection for every body; each stream's window is the default 64 KiB.
        builder.initial_connection_window_size(4 << 20);
        let conn = connect(builder, move |request, respond| {
            let done = counted.clone();
            async move {
                if request.headers()[SEQ_HEADER] == "0" {
                    // The first body is read only once every other request is answered.
                    while done.get() < N - 1 {
                        tokio::task::yield_now().await;
                    }
                }
                let (_, body) = body_of(request).await;
                assert_eq!(body.len(), 200_000);
                answer(respond, 0);
                done.set(done.get() + 1);
            }
        })
        .await;
        let spec = spec(Bytes::from(vec![b'a'; 200_000]));
        let template = template_for(&spec);
        let requests = send_all(&conn, &template, &spec, N as u64);
        let all = async {
            for request in requests {
                request.await.expect("task").expect("answered");
            }
        };
        // Bound only against a hang: it takes milliseconds.
        tokio::time::timeout(std::time::Duration::from_secs(30), all)
            .await
            .expect("every body went");
    });
}

#[test]
fn a_narrow_pipe_splits_frames_across_reads_and_holds_writes() {
    run(async {
        let conn = connect_through(
            64,
            h2::server::Builder::new(),
            |request, respond| async move {
                let (_, body) = body_of(request).await;
                assert_eq!(body.len(), 100_000);
                answer(respond, 100);
            },
        )
        .await;
        let spec = spec(Bytes::from(vec![b'a'; 100_000]));
        let template = template_for(&spec);
        let requests = send_all(&conn, &template, &spec, 8);
        for request in requests {
            let x = request.await.expect("task").expect("answered");
            assert!(x.mock_times.is_some());
        }
    });
}

#[test]
fn resets_statuses_and_trailers_reach_their_request() {
    run(async {
        let conn = connect(
            h2::server::Builder::new(),
            |request, mut respond| async move {
                let seq: u64 = request.headers()[SEQ_HEADER]
                    .to_str()
                    .expect("seq")
                    .parse()
                    .expect("number");
                let _ = body_of(request).await;
                match seq {
                    0 => respond.send_reset(h2::Reason::INTERNAL_ERROR),
                    1 => {
                        let head = Response::builder().status(503).body(()).expect("head");
                        respond.send_response(head, true).expect("head");
                    }
                    _ => {
                        let mut sending = respond.send_response(ok_head(), false).expect("head");
                        sending
                            .send_data(Bytes::from_static(ANSWER.as_bytes()), false)
                            .expect("data");
                        let mut trailers = HeaderMap::new();
                        trailers.insert("x-done", HeaderValue::from_static("1"));
                        sending.send_trailers(trailers).expect("trailers");
                    }
                }
            },
        )
        .await;
        let spec = spec(Bytes::from_static(b"{}"));
        let template = template_for(&spec);
        assert_eq!(
            send(&conn, &template, &spec, 0).await.err(),
            Some(Failed::Kind(ErrorKind::Reset))
        );
        assert_eq!(
            send(&conn, &template, &spec, 1).await.err(),
            Some(Failed::Kind(ErrorKind::Status(503)))
        );
        assert!(send(&conn, &template, &spec, 2).await.is_ok());
    });
}

#[test]
fn a_request_given_up_resets_its_stream_and_the_connection_goes_on() {
    run(async {
        let reasons = Rc::new(RefCell::new(Vec::new()));
        let log = reasons.clone();
        let conn = connect(h2::server::Builder::new(), move |request, mut respond| {
            let log = log.clone();
            async move {
                let first = request.headers()[SEQ_HEADER] == "0";
                let _ = body_of(request).await;
                if first {
                    // Never answered: it waits for the client's reset.
                    let reason = poll_fn(|cx| respond.poll_reset(cx)).await.expect("reset");
                    log.borrow_mut().push(reason);
                    return;
                }
                answer(respond, 0);
            }
        })
        .await;
        let spec = spec(Bytes::from_static(b"{}"));
        let template = template_for(&spec);
        let given_up = {
            let (conn, template, spec) = (conn.clone(), template.clone(), spec.clone());
            tokio::task::spawn_local(async move { send(&conn, &template, &spec, 0).await })
        };
        // Once its stream is open, the request is dropped (as a timeout drops it).
        while conn.borrow().active_streams() == 0 {
            tokio::task::yield_now().await;
        }
        given_up.abort();
        assert!(given_up.await.is_err(), "aborted");
        assert!(send(&conn, &template, &spec, 1).await.is_ok());
        while reasons.borrow().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(*reasons.borrow(), [h2::Reason::CANCEL]);
        assert_eq!(conn.borrow().active_streams(), 0);
    });
}

#[test]
fn a_goaway_answers_the_open_streams_and_opens_no_more() {
    run(async {
        let (client, io) = tokio::io::duplex(1 << 20);
        tokio::task::spawn_local(async move {
            let mut server = h2::server::handshake(io).await.expect("handshake");
            let (request, respond) = server.accept().await.expect("a request").expect("ok");
            server.graceful_shutdown();
            tokio::task::spawn_local(async move {
                let _ = body_of(request).await;
                answer(respond, 0);
            });
            while server.accept().await.is_some() {}
        });
        let conn = Rc::new(RefCell::new(Conn::new()));
        tokio::task::spawn_local(drive(conn.clone(), client));
        let spec = spec(Bytes::from_static(b"{}"));
        let template = template_for(&spec);
        assert!(send(&conn, &template, &spec, 0).await.is_ok());
        while conn.borrow().accepts_streams() {
            tokio::task::yield_now().await;
        }
        // Never sent: it may go on another connection.
        assert_eq!(
            send(&conn, &template, &spec, 1).await.err(),
            Some(Failed::Unprocessed)
        );
    });
}

// Frames by hand: what the h2 server never sends.

/// A connection past its SETTINGS, with one stream open for an empty-bodied request.
fn open_stream() -> (Conn, u32) {
    let mut conn = Conn::new();
    let mut settings = Vec::new();
    frame::put_settings(
        &mut settings,
        &[(frame::setting::MAX_CONCURRENT_STREAMS, 10)],
    );
    assert_eq!(conn.receive(&settings, 0), Ok(settings.len()));
    let id = open_on(&mut conn);
    // Written by the connection's task.
    conn.take_out(&mut Vec::new());
    (conn, id)
}

/// Opens a stream on `conn` for an empty-bodied request.
fn open_on(conn: &mut Conn) -> u32 {
    let mut cx = Context::from_waker(Waker::noop());
    let open = conn.poll_open(
        &mut cx,
        &mut None,
        &[&[0x83, 0x87, 0x84]],
        &Bytes::new(),
        &mut Some(Exchange::default()),
        false,
        0,
    );
    let Poll::Ready(Ok(id)) = open else {
        panic!("the stream opens")
    };
    id
}

/// Whether stream `id`'s request failed `invalid`.
fn failed_invalid(conn: &mut Conn, id: u32) -> bool {
    outcome(conn, id).and_then(Result::err) == Some(Failed::Kind(ErrorKind::Invalid))
}

/// Appends a response head (`:status`, `content-length`) as one HEADERS frame.
fn put_head(input: &mut Vec<u8>, id: u32, status: &[u8], length: Option<&[u8]>) {
    let block = head_block(status, length);
    frame::put_header(input, block.len(), kind::HEADERS, flag::END_HEADERS, id);
    input.extend_from_slice(&block);
}

fn outcome(conn: &mut Conn, id: u32) -> Option<Result<Exchange, Failed>> {
    let mut cx = Context::from_waker(Waker::noop());
    match conn.poll_outcome(&mut cx, id) {
        Poll::Ready(outcome) => Some(outcome),
        Poll::Pending => None,
    }
}

/// The frames in `out`: kind, flags, stream and payload.
fn frames(out: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut at = 0;
    let mut all = Vec::new();
    while let Some(h) = frame::Header::parse(&out[at..]) {
        let payload = out[at + frame::HEADER_LEN..at + frame::HEADER_LEN + h.len].to_vec();
        all.push((h.kind, h.flags, h.stream, payload));
        at += frame::HEADER_LEN + h.len;
    }
    all
}

fn head_block(status: &[u8], length: Option<&[u8]>) -> Vec<u8> {
    let mut block = Vec::new();
    put_literal(&mut block, Some(8), b"", status);
    if let Some(length) = length {
        put_literal(&mut block, Some(28), b"", length);
    }
    block
}

#[test]
fn padded_continued_and_informational_frames_are_read() {
    let (mut conn, id) = open_stream();
    let mut input = Vec::new();
    // A 103 first, then the head padded, with a priority, continued.
    let early = head_block(b"103", None);
    frame::put_header(
        &mut input,
        early.len(),
        kind::HEADERS,
        flag::END_HEADERS,
        id,
    );
    input.extend_from_slice(&early);
    let block = head_block(b"200", Some(ANSWER.len().to_string().as_bytes()));
    let (a, b) = block.split_at(3);
    let padded_len = 1 + 5 + a.len() + 4;
    frame::put_header(
        &mut input,
        padded_len,
        kind::HEADERS,
        flag::PADDED | flag::PRIORITY,
        id,
    );
    input.push(4);
    input.extend_from_slice(&[0, 0, 0, 0, 16]);
    input.extend_from_slice(a);
    input.extend_from_slice(&[0; 4]);
    frame::put_header(
        &mut input,
        b.len(),
        kind::CONTINUATION,
        flag::END_HEADERS,
        id,
    );
    input.extend_from_slice(b);
    // A PING between, and the body in a padded frame and an empty last one.
    frame::put_header(&mut input, 8, kind::PING, 0, 0);
    input.extend_from_slice(b"12345678");
    frame::put_header(&mut input, ANSWER.len() + 3, kind::DATA, flag::PADDED, id);
    input.push(2);
    input.extend_from_slice(ANSWER.as_bytes());
    input.extend_from_slice(&[0, 0]);
    // Half a frame is left for the next read.
    frame::put_data(&mut input, id, b"", true);
    let whole = input.len();
    input.extend_from_slice(&[0, 0]);
    assert_eq!(conn.receive(&input, 5_000), Ok(whole));
    let x = outcome(&mut conn, id).expect("ended").expect("answered");
    assert_eq!((x.first_byte_ns, x.done_ns), (Some(5_000), 5_000));
    let written = frames(&conn.out);
    assert_eq!(written, [(kind::PING, flag::ACK, 0, b"12345678".to_vec())]);
}

#[test]
fn a_body_unlike_its_length_or_before_its_head_fails_its_stream() {
    let (mut conn, id) = open_stream();
    let mut input = Vec::new();
    put_head(&mut input, id, b"200", Some(b"999"));
    frame::put_data(&mut input, id, ANSWER.as_bytes(), true);
    assert_eq!(conn.receive(&input, 0), Ok(input.len()));
    assert!(failed_invalid(&mut conn, id));
    // Both sides had ended: nothing to reset.
    assert_eq!(frames(&conn.out), []);

    // A body past its length is cut off at once.
    let (mut conn, id) = open_stream();
    let mut input = Vec::new();
    put_head(&mut input, id, b"200", Some(b"5"));
    frame::put_data(&mut input, id, ANSWER.as_bytes(), false);
    assert_eq!(conn.receive(&input, 0), Ok(input.len()));
    assert!(failed_invalid(&mut conn, id));
    let rst = (
        kind::RST_STREAM,
        0,
        id,
        code::PROTOCOL_ERROR.to_be_bytes().to_vec(),
    );
    assert_eq!(frames(&conn.out), [rst]);

    let (mut conn, id) = open_stream();
    let mut input = Vec::new();
    frame::put_data(&mut input, id, b"early", false);
    assert_eq!(conn.receive(&input, 0), Ok(input.len()));
    assert!(failed_invalid(&mut conn, id));
    assert_eq!(conn.active_streams(), 0);
}

#[test]
fn a_goaway_leaves_the_streams_past_its_last_unprocessed() {
    let (mut conn, first) = open_stream();
    let second = open_on(&mut conn);
    let mut input = Vec::new();
    frame::put_goaway(&mut input, first, 0);
    assert_eq!(conn.receive(&input, 0), Ok(input.len()));
    assert_eq!(
        outcome(&mut conn, second).and_then(Result::err),
        Some(Failed::Unprocessed)
    );
    assert!(outcome(&mut conn, first).is_none(), "still to be answered");
    assert!(!conn.accepts_streams());
}

#[test]
fn frames_that_break_the_protocol_end_the_connection() {
    let broken = |input: &[u8]| {
        let (mut conn, _) = open_stream();
        conn.receive(input, 0).err()
    };
    let invalid = |code| {
        Some(ConnError {
            code,
            kind: ErrorKind::Invalid,
        })
    };
    let mut push = Vec::new();
    frame::put_header(&mut push, 4, kind::PUSH_PROMISE, flag::END_HEADERS, 1);
    push.extend_from_slice(&[0, 0, 0, 2]);
    assert_eq!(broken(&push), invalid(code::PROTOCOL_ERROR));
    let mut huge = Vec::new();
    frame::put_header(&mut huge, frame::DEFAULT_MAX_FRAME + 1, kind::DATA, 0, 1);
    assert_eq!(broken(&huge), invalid(code::FRAME_SIZE_ERROR));
    let mut dynamic = Vec::new();
    frame::put_header(&mut dynamic, 1, kind::HEADERS, flag::END_HEADERS, 1);
    dynamic.push(0x80 | 62);
    assert_eq!(broken(&dynamic), invalid(code::COMPRESSION_ERROR));
    let mut interleaved = Vec::new();
    frame::put_header(&mut interleaved, 1, kind::HEADERS, 0, 1);
    interleaved.push(0x88);
    frame::put_header(&mut interleaved, 8, kind::PING, 0, 0);
    interleaved.extend_from_slice(&[0; 8]);
    assert_eq!(broken(&interleaved), invalid(code::PROTOCOL_ERROR));
    // Frames on streams the client never opened: past its last (1), or the server's own.
    for stream in [3, 2] {
        let mut data = Vec::new();
        frame::put_data(&mut data, stream, b"", true);
        assert_eq!(broken(&data), invalid(code::PROTOCOL_ERROR), "{stream}");
        let mut head = Vec::new();
        put_head(&mut head, stream, b"200", None);
        assert_eq!(broken(&head), invalid(code::PROTOCOL_ERROR), "{stream}");
        let mut reset = Vec::new();
        frame::put_rst_stream(&mut reset, stream, code::CANCEL);
        assert_eq!(broken(&reset), invalid(code::PROTOCOL_ERROR), "{stream}");
        let mut window = Vec::new();
        frame::put_window_update(&mut window, stream, 1);
        assert_eq!(broken(&window), invalid(code::PROTOCOL_ERROR), "{stream}");
        // PRIORITY may name any stream.
        let mut priority = Vec::new();
        frame::put_header(&mut priority, 5, kind::PRIORITY, 0, stream);
        priority.extend_from_slice(&[0, 0, 0, 1, 15]);
        assert_eq!(broken(&priority), None, "{stream}");
    }
    // A PRIORITY frame of the wrong length, or on the connection.
    let mut short = Vec::new();
    frame::put_header(&mut short, 4, kind::PRIORITY, 0, 1);
    short.extend_from_slice(&[0, 0, 0, 3]);
    assert_eq!(broken(&short), invalid(code::FRAME_SIZE_ERROR));
    let mut on_connection = Vec::new();
    frame::put_header(&mut on_connection, 5, kind::PRIORITY, 0, 0);
    on_connection.extend_from_slice(&[0, 0, 0, 1, 15]);
    assert_eq!(broken(&on_connection), invalid(code::PROTOCOL_ERROR));

    // DATA or HEADERS after the server ended the stream; the answer it ended stands.
    for late_kind in [kind::DATA, kind::HEADERS] {
        let (mut conn, id) = open_stream();
        let mut ended = Vec::new();
        put_head(&mut ended, id, b"200", None);
        frame::put_data(&mut ended, id, b"{}", true);
        // A window may still come for the request's side.
        frame::put_window_update(&mut ended, id, 1);
        assert_eq!(conn.receive(&ended, 0), Ok(ended.len()));
        let mut late = Vec::new();
        match late_kind {
            kind::DATA => frame::put_data(&mut late, id, b"", false),
            _ => put_head(&mut late, id, b"200", None),
        }
        let err = conn
            .receive(&late, 0)
            .expect_err("a frame after END_STREAM");
        assert_eq!(err, invalid(code::STREAM_CLOSED).unwrap(), "{late_kind}");
        conn.fail(err);
        assert!(matches!(outcome(&mut conn, id), Some(Ok(_))), "{late_kind}");
    }
    // DATA, HEADERS and WINDOW_UPDATE after the server reset the stream are answered with
    // STREAM_CLOSED, a second RST_STREAM is not, and the connection goes on; the DATA still
    // counts against the connection's window, which is given back.
    let (mut conn, id) = open_stream();
    let mut reset = Vec::new();
    frame::put_rst_stream(&mut reset, id, code::CANCEL);
    // A head that ends the stream does not make the reset an end.
    let block = head_block(b"200", None);
    let ends = flag::END_HEADERS | flag::END_STREAM;
    frame::put_header(&mut reset, block.len(), kind::HEADERS, ends, id);
    reset.extend_from_slice(&block);
    frame::put_window_update(&mut reset, id, 1);
    frame::put_rst_stream(&mut reset, id, code::CANCEL);
    let full = vec![0; frame::DEFAULT_MAX_FRAME];
    let frames_to_half = CONNECTION_WINDOW as usize / 2 / full.len();
    for _ in 0..frames_to_half {
        frame::put_data(&mut reset, id, &full, false);
    }
    assert_eq!(conn.receive(&reset, 0), Ok(reset.len()));
    let closed = (
        kind::RST_STREAM,
        0,
        id,
        code::STREAM_CLOSED.to_be_bytes().to_vec(),
    );
    let given_back = (CONNECTION_WINDOW / 2).to_be_bytes().to_vec();
    let (windows, resets): (Vec<_>, Vec<_>) = frames(&conn.out)
        .into_iter()
        .partition(|f| f.0 == kind::WINDOW_UPDATE);
    assert_eq!(windows, [(kind::WINDOW_UPDATE, 0, 0, given_back)]);
    assert_eq!(resets, vec![closed; 2 + frames_to_half]);
    // A stream the client reset while the server's side was open (here, DATA before its
    // head) may still get frames the server sent before it knew, and so may one it forgot.
    let (mut conn, id) = open_stream();
    let mut early = Vec::new();
    frame::put_data(&mut early, id, b"{}", false);
    assert_eq!(conn.receive(&early, 0), Ok(early.len()));
    assert_eq!(frames(&conn.out)[0].0, kind::RST_STREAM);
    conn.take_out(&mut Vec::new());
    let mut late = Vec::new();
    put_head(&mut late, id, b"200", None);
    frame::put_data(&mut late, id, b"{}", true);
    frame::put_window_update(&mut late, id, 1);
    assert_eq!(conn.receive(&late, 0), Ok(late.len()));
    assert!(conn.out.is_empty());
    conn.forget(&mut None, Some(id));
    assert_eq!(conn.receive(&late, 0), Ok(late.len()));
    assert!(conn.out.is_empty());

    // The connection's end fails its streams and writes a GOAWAY with the code.
    let (mut conn, id) = open_stream();
    conn.fail(ConnError {
        code: code::PROTOCOL_ERROR,
        kind: ErrorKind::Invalid,
    });
    assert!(failed_invalid(&mut conn, id));
    assert_eq!(frames(&conn.out)[0].0, kind::GOAWAY);
    assert!(!conn.accepts_streams());
}

#[test]
fn a_server_flooding_the_connection_with_pings_is_stopped() {
    let ping = |input: &mut Vec<u8>| {
        frame::put_header(input, 8, kind::PING, 0, 0);
        input.extend_from_slice(&[7; 8]);
    };
    let calm = Err(ConnError {
        code: code::ENHANCE_YOUR_CALM,
        kind: ErrorKind::Invalid,
    });
    // PING and SETTINGS acknowledgements count alike, up to the limit.
    let (mut conn, _) = open_stream();
    let mut answered = Vec::new();
    for _ in 1..MAX_QUEUED_ANSWERS {
        ping(&mut answered);
    }
    frame::put_settings(&mut answered, &[]);
    assert_eq!(conn.receive(&answered, 0), Ok(answered.len()));
    assert_eq!(frames(&conn.out).len(), MAX_QUEUED_ANSWERS);
    // Once the connection's task takes them to write, the count starts again.
    conn.take_out(&mut Vec::new());
    assert_eq!(conn.receive(&answered, 0), Ok(answered.len()));
    // One more while those wait.
    let mut one = Vec::new();
    ping(&mut one);
    assert_eq!(conn.receive(&one, 0), calm);
}

#[test]
fn the_preface_sets_the_windows_and_an_empty_table() {
    let conn = Conn::new();
    assert!(conn.out.starts_with(frame::PREFACE));
    let written = frames(&conn.out[frame::PREFACE.len()..]);
    assert_eq!(written.len(), 2);
    let (k, _, _, settings) = &written[0];
    assert_eq!(*k, kind::SETTINGS);
    let pairs: Vec<(u16, u32)> = settings
        .chunks(6)
        .map(|p| {
            (
                u16::from_be_bytes([p[0], p[1]]),
                u32::from_be_bytes([p[2], p[3], p[4], p[5]]),
            )
        })
        .collect();
    assert!(pairs.contains(&(frame::setting::HEADER_TABLE_SIZE, 0)));
    assert!(pairs.contains(&(frame::setting::ENABLE_PUSH, 0)));
    let (k, _, stream, increment) = &written[1];
    assert_eq!((*k, *stream), (kind::WINDOW_UPDATE, 0));
    let increment = u32::from_be_bytes(increment[..4].try_into().expect("4 octets"));
    assert_eq!(increment + 65_535, super::connection::CONNECTION_WINDOW);
}

#[test]
fn a_lane_keeps_its_connection_and_requests_without_one_take_each_in_turn() {
    let next = Cell::new(0);
    let lanes: Vec<usize> = [0, 1, 2, 3, 4, 5, 6, 7]
        .map(|lane| slot_of(Some(lane), &next, 3))
        .into();
    assert_eq!(lanes, [0, 1, 2, 0, 1, 2, 0, 1]);
    // Lanes leave the turn where it was.
    assert_eq!(next.get(), 0);
    let turns: Vec<usize> = (0..5).map(|_| slot_of(None, &next, 3)).collect();
    assert_eq!(turns, [0, 1, 2, 0, 1]);
    assert_eq!(slot_of(Some(7), &next, 3), 1);
    assert_eq!(slot_of(None, &next, 3), 2);
}
