//! Answers one request: route, read, scan, draw, respond.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use std::sync::Mutex;

use crate::admission::request::RequestBody;
use bytes::Bytes;
use gatebench_shared::clock;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};

use crate::admission::inbound::Arrival;
use crate::admission::rejection::Rejection;
use crate::admission::router::{route, AzureApi, Route};
use crate::answer::body::MockBody;
use crate::api;
use crate::config::Provider;
use crate::control::Refused;
use crate::observability::metrics::RouteKind;
use crate::observability::record::{Arrived, UserId};
use crate::serving::stamp::Stamp;
use crate::state::State;

/// [`handle`] as hyper's servers call it: the answer's fixed header set goes into its header
/// map, ahead of the headers the route added, with the stamp (`crate::serving::stamp`). While the mock
/// is steered to refuse, the request is not answered: the error makes hyper drop the
/// connection (HTTP/2: the stream).
pub async fn handle_for_hyper(
    state: Arc<State>,
    req: Request<Incoming>,
    socket: RawFd,
) -> Result<Response<MockBody>, Refused> {
    if state.control.refusing() {
        return Err(Refused);
    }
    let stamp = Stamp::of(req.headers());
    let mut req = req.map(RequestBody::Incoming);
    let mut answer = None;
    handle(&state, &mut req, socket, &mut answer).await;
    let Some(mut response) = answer else {
        return Err(Refused);
    };
    if let Some(fixed) = response.body().fixed_headers() {
        let added = std::mem::replace(response.headers_mut(), state.catalog.fixed_map(fixed));
        response.headers_mut().extend(added);
    }
    stamp.insert(&state, response.headers_mut());
    Ok(response)
}

/// Answers one request, from hyper or from the own HTTP/1.1 server, into `out` (always filled).
/// The request is lent and the answer built where the caller keeps it: moved, each was copied
/// into or out of every future on its way, a few hundred bytes a time.
pub async fn handle(
    state: &Arc<State>,
    req: &mut Request<RequestBody>,
    socket: RawFd,
    out: &mut Option<Response<MockBody>>,
) {
    let h2 = req.version() == hyper::Version::HTTP_2;
    // Set when the request asks for timestamps (loadgen's attribution).
    let received_ns = AtomicU64::new(0);
    // One call site per API type: each `answer::<A>` is inlined where it is called, and a
    // second call site (Azure's paths) would keep it out of line for every API.
    let routed = route(req.method(), req.uri().path());
    let p = routed.provider();
    // `--record`: the body's user, set once the body is read.
    let user = Mutex::new(UserId::NONE);
    let recorded_as = state.recorder.as_ref().and(routed.api_name());
    let arrival = arrival(state, h2, socket, &received_ns, recorded_as.map(|_| &user));
    let noted = recorded_as.map(|route| Noted::of(req, p, route, arrival.start));
    let answered = match routed {
        Route::ChatCompletions | Route::Azure(AzureApi::Chat) => {
            api::answer::<api::Chat>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Chat>(state, p, r))
        }
        Route::Messages => api::answer::<api::Messages>(state, req, arrival, p, out)
            .await
            .map_err(|r| api::refused::<api::Messages>(state, p, r)),
        Route::Responses | Route::Azure(AzureApi::Responses) => {
            api::answer::<api::Responses>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Responses>(state, p, r))
        }
        Route::Embeddings | Route::Azure(AzureApi::Embeddings) => {
            api::answer::<api::Embeddings>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Embeddings>(state, p, r))
        }
        Route::Completions | Route::Azure(AzureApi::Completions) => {
            api::answer::<api::Completions>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Completions>(state, p, r))
        }
        Route::Gemini { stream: false } => {
            api::answer::<api::Gemini<false>>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Gemini<false>>(state, p, r))
        }
        Route::Gemini { stream: true } => {
            api::answer::<api::Gemini<true>>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Gemini<true>>(state, p, r))
        }
        Route::Bedrock { stream: false } => {
            api::answer::<api::Bedrock<false>>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Bedrock<false>>(state, p, r))
        }
        Route::Bedrock { stream: true } => {
            api::answer::<api::Bedrock<true>>(state, req, arrival, p, out)
                .await
                .map_err(|r| api::refused::<api::Bedrock<true>>(state, p, r))
        }
        other => Err(service(state, other, req)),
    };
    if let Err(response) = answered {
        *out = Some(response);
    }
    let Some(response) = out else {
        return;
    };
    finish(state, response, received_ns.load(Relaxed), h2);
    if let (Some(recorder), Some(noted)) = (&state.recorder, noted) {
        recorder.push(noted.answered(&user, response));
    }
}

/// What a request's answer needs of its arrival: when it came (only a latency model that
/// waits needs the time, or one the control listener may steer; the clock read is skipped
/// otherwise), its socket (HTTP/1.1 only) and, when recording, where its user goes.
#[inline]
fn arrival<'a>(
    state: &State,
    h2: bool,
    socket: RawFd,
    received_ns: &'a AtomicU64,
    user: Option<&'a Mutex<UserId>>,
) -> Arrival<'a> {
    Arrival {
        start: (state.timed || state.control.active()).then(clock::monotonic_ns),
        socket: (!h2).then_some(socket),
        received_ns,
        user,
    }
}

/// What `--record` keeps of a request before it is answered.
struct Noted {
    t_ns: u64,
    seq: Option<u64>,
    key: Option<u32>,
    route: &'static str,
}

impl Noted {
    fn of(
        req: &Request<RequestBody>,
        provider: Provider,
        route: &'static str,
        start: Option<u64>,
    ) -> Noted {
        Noted {
            t_ns: start.unwrap_or_else(clock::monotonic_ns),
            seq: crate::admission::request::seq(req.headers()).ok().flatten(),
            key: crate::admission::auth::key_hash(req.headers(), provider),
            route,
        }
    }

    /// The arrival as recorded, with its answer's status.
    fn answered(self, user: &Mutex<UserId>, response: &Response<MockBody>) -> Arrived {
        Arrived {
            t_ns: self.t_ns,
            seq: self.seq,
            user: *user.lock().unwrap_or_else(|e| e.into_inner()),
            key: self.key,
            route: self.route,
            status: response.status().as_u16(),
            cut: response.body().breaks(),
        }
    }
}

/// Counts the answer and stamps it: the mock's timestamps when the request asked for them
/// (`received_ns` not 0), and no connection header over HTTP/2.
#[inline]
fn finish(state: &State, response: &mut Response<MockBody>, received_ns: u64, h2: bool) {
    state.metrics.response(response.status().as_u16());
    if let Some(n) = http_body::Body::size_hint(response.body()).exact() {
        state.metrics.bytes_out(n as usize);
    }
    if received_ns != 0 {
        let headers = response.headers_mut();
        headers.insert(clock::RECEIVED_HEADER, HeaderValue::from(received_ns));
        headers.insert(
            clock::STARTED_HEADER,
            HeaderValue::from(clock::monotonic_ns()),
        );
    }
    if h2 {
        // HTTP/2 has no connection-specific headers; a 413's `connection: close` would be a
        // protocol error there.
        response.headers_mut().remove(hyper::header::CONNECTION);
    }
}

/// The routes that are not an API: models, health, metrics, the mock's own configuration and
/// clock, and the answers to unknown paths and methods.
pub fn service(state: &State, route: Route<'_>, req: &Request<RequestBody>) -> Response<MockBody> {
    match route {
        Route::Models => {
            state.metrics.request(RouteKind::Models);
            json(&state.catalog.models_body)
        }
        Route::Model(id) => {
            state.metrics.request(RouteKind::Models);
            model(state, id)
        }
        Route::Health => {
            state.metrics.request(RouteKind::Health);
            json(&state.catalog.health_body)
        }
        Route::Metrics => {
            state.metrics.request(RouteKind::Metrics);
            let mut text = state.metrics.to_prometheus();
            if let Some(cache) = &state.prompt_cache {
                cache.to_prometheus(&mut text);
            }
            if let Some(prefill) = &state.prefill {
                prefill.to_prometheus(&mut text);
            }
            state.control.to_prometheus(&mut text);
            let body = MockBody::owned(text.into());
            typed(body, "text/plain; version=0.0.4")
        }
        Route::Config => {
            state.metrics.request(RouteKind::Other);
            typed(MockBody::bytes(&state.config_toml), "application/toml")
        }
        Route::Clock => {
            state.metrics.request(RouteKind::Other);
            // Read as late as possible: the load generator takes the middle of its round trip.
            let unix_us = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros());
            let body = MockBody::owned(format!("{{\"unix_us\":{unix_us}}}").into_bytes());
            typed(body, "application/json")
        }
        Route::Record => {
            state.metrics.request(RouteKind::Other);
            record(state, req.uri().query())
        }
        Route::Control => {
            state.metrics.request(RouteKind::Other);
            Rejection::control_elsewhere().into_response()
        }
        Route::MethodNotAllowed { allow } => {
            state.metrics.request(RouteKind::Other);
            let path = req.uri().path();
            let rejection = Rejection::method_not_allowed(req.method().as_str(), path, allow);
            if path == "/v1/messages" {
                rejection.anthropic().into_response()
            } else {
                rejection.into_response()
            }
        }
        Route::NotFound => {
            state.metrics.request(RouteKind::Other);
            Rejection::not_found(req.method().as_str(), req.uri().path()).into_response()
        }
        // The API routes are answered by `api::answer`.
        Route::ChatCompletions
        | Route::Messages
        | Route::Responses
        | Route::Embeddings
        | Route::Completions
        | Route::Azure(_)
        | Route::Gemini { .. }
        | Route::Bedrock { .. } => {
            Rejection::not_found(req.method().as_str(), req.uri().path()).into_response()
        }
    }
}

/// The answer to `GET /v1/gatebench/record?since=K` (on the main and the control listener):
/// the record as JSON, a 400 for a bad `since`, or a 409 when the mock does not record.
pub fn record(state: &State, query: Option<&str>) -> Response<MockBody> {
    let Some(recorder) = &state.recorder else {
        return Rejection::recording_off().into_response();
    };
    match crate::observability::record::since_of(query) {
        Ok(since) => {
            let now_ns = clock::monotonic_ns();
            let name = state.config.name.as_deref();
            let body = crate::observability::record::record_json(recorder, since, name, now_ns);
            typed(MockBody::owned(body), "application/json")
        }
        Err(value) => Rejection::bad_param(
            format!(
                "Invalid since '{value}': expected the index of an arrival, a whole number \
                 like 0 or 120."
            ),
            "since",
        )
        .into_response(),
    }
}

pub fn json(body: &Bytes) -> Response<MockBody> {
    typed(MockBody::bytes(body), "application/json")
}

/// A response of `body` with its `content-type`.
pub fn typed(body: MockBody, content_type: &'static str) -> Response<MockBody> {
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn model(state: &State, id: &str) -> Response<MockBody> {
    if !state.config.models.iter().any(|m| m == id) {
        return Rejection::model_not_found(id).into_response();
    }
    let model = gatebench_shared::wire::openai::Model {
        id,
        object: "model",
        created: crate::catalog::CREATED,
        owned_by: "gatebench",
    };
    // Invariant: the wire types always serialise.
    json(&Bytes::from(
        serde_json::to_vec(&model).expect("model serialises"),
    ))
}
