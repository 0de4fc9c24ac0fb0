//! `POST /v1/responses`: OpenAI's Responses API, streaming and not, from the same latency model
//! and token text as the chat route.

use std::sync::Arc;

use crate::request::RequestBody;
use gatebench_shared::wire::responses::ResponsesRequest;
use hyper::{Request, Response};

use crate::body::MockBody;
use crate::catalog::FixedHeaders;
use crate::catalog::Outcome;
use crate::config::{Api, Provider};
use crate::inbound::{receive, Arrival, Ask};
use crate::metrics::RouteKind;
use crate::rejection::Rejection;
use crate::sse::{SseStream, StreamApi, StreamPlan};
use crate::state::State;
use crate::template::Fill;

/// Answers a responses request (errors in OpenAI's shape).
pub async fn responses(
    state: &Arc<State>,
    req: Request<RequestBody>,
    arrival: Arrival<'_>,
) -> Result<Response<MockBody>, Rejection> {
    let inbound = receive(state, req, arrival, Provider::OpenAi).await?;
    let body = &inbound.body;
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Rejection::not_json());
    }
    let request: ResponsesRequest = serde_json::from_slice(body).map_err(|e| {
        if e.is_data() {
            Rejection::bad_request(format!("Invalid request body: {e}."), None, None)
        } else {
            Rejection::not_json()
        }
    })?;
    let Some(model) = inbound.echoed(&request.model) else {
        return Err(Rejection::bad_request(
            "Missing required parameter: 'model'.",
            Some("model"),
            Some("missing_required_parameter"),
        ));
    };
    if request.input.is_none() {
        return Err(Rejection::bad_request(
            "Missing required parameter: 'input'.",
            Some("input"),
            Some("missing_required_parameter"),
        ));
    }
    let input_tokens = request.input_tokens().map_err(|e| {
        Rejection::bad_request(format!("Invalid 'input': {e}."), Some("input"), None)
    })?;
    let cap = request.max_output_tokens;
    if cap.is_some_and(|c| c < 16) {
        return Err(Rejection::bad_request(
            format!(
                "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {} instead.",
                cap.unwrap_or(0)
            ),
            Some("max_output_tokens"),
            Some("integer_below_min_value"),
        ));
    }

    let ask = Ask {
        api: Api::Responses,
        streaming: request.stream == Some(true),
        prompt_tokens: input_tokens,
        max_output: cap,
        has_tools: false,
    };
    let admitted = match inbound.admit(state, ask) {
        Ok(admitted) => admitted,
        Err(fault) => return Ok(*fault),
    };
    let mut draw = admitted.draw;
    let drawn = draw.tokens();
    let (tokens, outcome) = match cap {
        Some(cap) if cap < u64::from(drawn) => (cap as u32, Outcome::Incomplete),
        _ => (drawn, Outcome::Completed),
    };

    if request.stream == Some(true) {
        state.metrics.request(RouteKind::ResponsesStream);
        let plan = StreamPlan {
            model,
            tokens,
            prompt_tokens: input_tokens,
            api: StreamApi::Responses { outcome },
            fault: admitted.stream_fault,
            socket: inbound.socket,
            tool: None,
        };
        let stream = SseStream::new(state.clone(), plan, draw, inbound.start);
        let mut response =
            Response::new(MockBody::stream(stream).with_headers(FixedHeaders::OpenAiSse));
        admitted.limits.stamp(&mut response, state);
        return Ok(response);
    }

    state.metrics.request(RouteKind::Responses);
    let delay_us = draw.response_us(tokens);
    inbound.wait(state, delay_us).await;
    let content = state.catalog.content(tokens);
    let payload = state.catalog.responses.response(outcome).fill(&Fill {
        model: &model,
        content: &content,
        prompt_tokens: input_tokens,
        completion_tokens: u64::from(tokens),
        sequence: 0,
    });
    let mut response = Response::new(MockBody::whole(payload).with_headers(
        FixedHeaders::OpenAiJson {
            processing_ms: delay_us / 1000,
        },
    ));
    admitted.limits.stamp(&mut response, state);
    Ok(response)
}
