//! Answers one request: route, read, scan, draw, respond.

use std::convert::Infallible;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::request::RequestBody;
use bytes::Bytes;
use gatebench_shared::clock;
use gatebench_shared::wire::openai::{ChatRequest, FinishReason};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};

use crate::body::MockBody;
use crate::catalog::FixedHeaders;
use crate::config::{Api, Provider};
use crate::inbound::{receive, Arrival, Ask};
use crate::metrics::RouteKind;
use crate::rejection::Rejection;
use crate::router::{route, Route};
use crate::sse::{SseStream, StreamApi, StreamPlan};
use crate::state::State;
use crate::template::Fill;
use crate::tools::ToolAnswer;

/// [`handle`] as hyper's servers call it: the answer's fixed header set goes into its header
/// map, ahead of the headers the route added.
pub async fn handle_for_hyper(
    state: Arc<State>,
    req: Request<Incoming>,
    socket: RawFd,
) -> Result<Response<MockBody>, Infallible> {
    let catalog_of = state.clone();
    let Ok(mut response) = handle(state, req.map(RequestBody::Incoming), socket).await;
    if let Some(fixed) = response.body().fixed_headers() {
        let added = std::mem::replace(response.headers_mut(), catalog_of.catalog.fixed_map(fixed));
        response.headers_mut().extend(added);
    }
    Ok(response)
}

/// Answers one request, from hyper or from the own HTTP/1.1 server.
pub async fn handle(
    state: Arc<State>,
    req: Request<RequestBody>,
    socket: RawFd,
) -> Result<Response<MockBody>, Infallible> {
    let h2 = req.version() == hyper::Version::HTTP_2;
    // Set when the request asks for timestamps (loadgen's attribution).
    let received_ns = AtomicU64::new(0);
    let arrival = Arrival {
        // Only a latency model that waits needs the arrival time; skip the clock read otherwise.
        start: state.timed.then(clock::monotonic_ns),
        socket: (!h2).then_some(socket),
        received_ns: &received_ns,
    };
    let mut response = match route(req.method(), req.uri().path()) {
        Route::ChatCompletions => chat(&state, req, arrival)
            .await
            .unwrap_or_else(Rejection::into_response),
        Route::Messages => crate::messages::messages(&state, req, arrival)
            .await
            .unwrap_or_else(|r| r.anthropic().into_response()),
        Route::Responses => crate::responses::responses(&state, req, arrival)
            .await
            .unwrap_or_else(Rejection::into_response),
        Route::Embeddings => crate::embeddings::embeddings(&state, req, arrival)
            .await
            .unwrap_or_else(Rejection::into_response),
        Route::Completions => crate::completions::completions(&state, req, arrival)
            .await
            .unwrap_or_else(Rejection::into_response),
        Route::Models => {
            state.metrics.request(RouteKind::Models);
            json(&state.catalog.models_body)
        }
        Route::Model(id) => {
            state.metrics.request(RouteKind::Models);
            model(&state, id)
        }
        Route::Health => {
            state.metrics.request(RouteKind::Health);
            json(&state.catalog.health_body)
        }
        Route::Metrics => {
            state.metrics.request(RouteKind::Metrics);
            let mut response = Response::new(MockBody::owned(state.metrics.to_prometheus().into()));
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            response
        }
        Route::Config => {
            state.metrics.request(RouteKind::Other);
            let mut response = Response::new(MockBody::bytes(&state.config_toml));
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/toml"));
            response
        }
        Route::Clock => {
            state.metrics.request(RouteKind::Other);
            // Read as late as possible: the load generator takes the middle of its round trip.
            let unix_us = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros());
            let mut response = Response::new(MockBody::owned(
                format!("{{\"unix_us\":{unix_us}}}").into_bytes(),
            ));
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
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
    };
    state.metrics.response(response.status().as_u16());
    if let Some(n) = http_body::Body::size_hint(response.body()).exact() {
        state.metrics.bytes_out(n as usize);
    }
    let received_ns = received_ns.load(Relaxed);
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
    Ok(response)
}

fn json(body: &Bytes) -> Response<MockBody> {
    let mut response = Response::new(MockBody::bytes(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
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

/// `POST /v1/chat/completions`.
async fn chat(
    state: &Arc<State>,
    req: Request<RequestBody>,
    arrival: Arrival<'_>,
) -> Result<Response<MockBody>, Rejection> {
    let inbound = receive(state, req, arrival, Provider::OpenAi).await?;
    let body = &inbound.body;
    // serde would read a JSON array as a struct in sequence form; the API takes only objects.
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|b| *b != b'{')
        && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok()
    {
        return Err(Rejection::bad_request(
            "Invalid request body: expected a JSON object.",
            None,
            None,
        ));
    }
    let request: ChatRequest = serde_json::from_slice(body).map_err(|e| {
        if e.is_data() {
            Rejection::bad_request(format!("Invalid request body: {e}."), None, None)
        } else {
            Rejection::not_json()
        }
    })?;
    let Some(model) = inbound.echoed(&request.model) else {
        return Err(Rejection::bad_request(
            "you must provide a model parameter",
            None,
            None,
        ));
    };
    let Some(messages) = request.messages else {
        return Err(Rejection::bad_request(
            "Missing required parameter: 'messages'.",
            Some("messages"),
            Some("missing_required_parameter"),
        ));
    };
    let cap = request.max_output_tokens();
    if cap == Some(0) {
        let param = if request.max_completion_tokens.is_some() {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        return Err(Rejection::bad_request(
            format!(
                "Invalid '{param}': integer below minimum value. Expected a value >= 1, \
                 but got 0 instead."
            ),
            Some(param),
            Some("integer_below_min_value"),
        ));
    }

    let prompt_tokens = messages.prompt_tokens();
    let tools = crate::tools::scan(state, &inbound.body);
    let tool_name = tools.as_ref().and_then(|t| t.callable());
    let ask = Ask {
        api: Api::Chat,
        streaming: request.stream == Some(true),
        prompt_tokens,
        max_output: cap,
        has_tools: tool_name.is_some(),
    };
    let admitted = match inbound.admit(state, ask) {
        Ok(admitted) => admitted,
        Err(fault) => return Ok(*fault),
    };
    let mut draw = admitted.draw;
    let drawn = draw.tokens();
    let (tokens, finish) = match cap {
        Some(cap) if cap < u64::from(drawn) => (cap as u32, FinishReason::Length),
        _ => (drawn, FinishReason::Stop),
    };
    let tool = tool_name
        .filter(|_| admitted.tool_call)
        .map(|name| Box::new(ToolAnswer::new(name, &model, prompt_tokens, tokens)));

    if request.stream == Some(true) {
        state.metrics.request(RouteKind::ChatStream);
        let plan = StreamPlan {
            model,
            tokens,
            prompt_tokens,
            api: StreamApi::Chat {
                finish,
                include_usage: request.include_usage(),
            },
            fault: admitted.stream_fault,
            socket: inbound.socket,
            tool,
        };
        let stream = SseStream::new(state.clone(), plan, draw, inbound.start);
        let mut response =
            Response::new(MockBody::stream(stream).with_headers(FixedHeaders::OpenAiSse));
        admitted.limits.stamp(&mut response, state);
        return Ok(response);
    }

    state.metrics.request(RouteKind::Chat);
    let delay_us = draw.response_us(tokens);
    inbound.wait(state, delay_us).await;
    let payload = match tool {
        Some(tool) => tool.openai_completion(state),
        None => state.catalog.completion(finish).fill(&Fill {
            model: &model,
            content: &state.catalog.content(tokens),
            prompt_tokens,
            completion_tokens: u64::from(tokens),
            sequence: 0,
        }),
    };
    let mut response = Response::new(MockBody::whole(payload).with_headers(
        FixedHeaders::OpenAiJson {
            processing_ms: delay_us / 1000,
        },
    ));
    admitted.limits.stamp(&mut response, state);
    Ok(response)
}
