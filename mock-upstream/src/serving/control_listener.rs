//! The control listener (`--control ADDR`, loopback only): `GET`/`POST
//! /v1/gatebench/control`, `POST /v1/gatebench/control/reset`, and beside them
//! `GET /v1/gatebench/record`, `/metrics` and `/health`, which must stay reachable while the
//! main listener is closed on purpose. Served by hyper on a thread of its own, away from the
//! workers; a peer that is not loopback gets 403.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::admission::rejection::Rejection;
use crate::admission::request::{read_body, RequestBody};
use crate::admission::router::Route;
use crate::answer::body::MockBody;
use crate::control::{Control, Steer};
use crate::serving::stamp::Stamp;
use crate::state::State;

/// Largest control body read.
const MAX_BODY: u64 = 64 * 1024;

/// Binds the control listener on `addr`.
pub fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves the control listener until `stop` turns true (or its sender is dropped).
pub async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    loop {
        tokio::select! {
            biased;
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    return Ok(());
                }
            }
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let state = state.clone();
                let loopback = peer.ip().is_loopback()
                    || peer_is_mapped_loopback(peer);
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(state.clone(), loopback, req));
                    let _ = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}

/// An IPv4 loopback peer as an IPv6 socket reports it (`::ffff:127.0.0.1`).
fn peer_is_mapped_loopback(peer: SocketAddr) -> bool {
    match peer.ip() {
        std::net::IpAddr::V6(ip) => ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        std::net::IpAddr::V4(_) => false,
    }
}

/// One request to the control listener, stamped like every answer.
async fn answer(
    state: Arc<State>,
    loopback: bool,
    req: Request<Incoming>,
) -> Result<Response<MockBody>, Infallible> {
    let stamp = Stamp::of(req.headers());
    let mut response = if loopback {
        route(&state, req).await
    } else {
        Rejection::with_status(
            StatusCode::FORBIDDEN,
            "The control listener answers loopback peers only.",
            "permission_error",
            None,
        )
        .into_response()
    };
    stamp.insert(&state, response.headers_mut());
    Ok(response)
}

async fn route(state: &Arc<State>, req: Request<Incoming>) -> Response<MockBody> {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let get = method == Method::GET || method == Method::HEAD;
    match (path.as_str(), get, method == Method::POST) {
        ("/v1/gatebench/control", true, _) => status(&state.control),
        ("/v1/gatebench/control", _, true) => {
            let (parts, body) = req.into_parts();
            let steer = match read_body(&parts.headers, body, MAX_BODY).await {
                Ok(body) => {
                    Steer::parse(&body).map_err(|e| Rejection::bad_param(e.message, &e.field))
                }
                Err(_) => Err(Rejection::bad_param(
                    format!("Could not read the control body (at most {MAX_BODY} bytes)."),
                    "body",
                )),
            };
            match steer {
                Ok(steer) => {
                    Control::post(&state.control, steer);
                    status(&state.control)
                }
                Err(rejection) => rejection.into_response(),
            }
        }
        ("/v1/gatebench/control/reset", _, true) => {
            state.control.reset();
            status(&state.control)
        }
        ("/v1/gatebench/record", true, _) => {
            crate::serving::handler::record(state, req.uri().query())
        }
        ("/metrics", true, _) => {
            let req = req.map(RequestBody::Incoming);
            crate::serving::handler::service(state, Route::Metrics, &req)
        }
        ("/health", true, _) => {
            let req = req.map(RequestBody::Incoming);
            crate::serving::handler::service(state, Route::Health, &req)
        }
        ("/v1/gatebench/control" | "/v1/gatebench/record" | "/metrics" | "/health", _, _)
        | ("/v1/gatebench/control/reset", _, _) => {
            let allow = match path.as_str() {
                "/v1/gatebench/control" => "GET, POST",
                "/v1/gatebench/control/reset" => "POST",
                _ => "GET",
            };
            Rejection::method_not_allowed(method.as_str(), &path, allow).into_response()
        }
        _ => Rejection::with_status(
            StatusCode::NOT_FOUND,
            format!(
                "Unknown path {path} on the control listener: it serves /v1/gatebench/control, \
                 /v1/gatebench/control/reset, /v1/gatebench/record, /metrics and /health."
            ),
            "invalid_request_error",
            Some("unknown_url"),
        )
        .into_response(),
    }
}

fn status(control: &Control) -> Response<MockBody> {
    crate::serving::handler::typed(MockBody::owned(control.status_json()), "application/json")
}
