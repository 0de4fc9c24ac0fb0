//! `POST /v1/completions`: OpenAI's legacy completions, streaming and not, from the same latency
//! model and token text as the chat route.

use std::sync::Arc;

use crate::request::RequestBody;
use gatebench_shared::wire::completions::CompletionRequest;
use gatebench_shared::wire::openai::FinishReason;
use hyper::{Request, Response};

use crate::body::MockBody;
use crate::catalog::FixedHeaders;
use crate::config::{Api, Provider};
use crate::inbound::{receive, Arrival, Ask};
use crate::metrics::RouteKind;
use crate::rejection::Rejection;
use crate::sse::{SseStream, StreamApi, StreamPlan};
use crate::state::State;
use crate::template::Fill;

/// Answers a legacy completion request (errors in OpenAI's shape).
pub async fn completions(
    state: &Arc<State>,
    req: Request<RequestBody>,
    arrival: Arrival<'_>,
) -> Result<Response<MockBody>, Rejection> {
    let inbound = receive(state, req, arrival, Provider::OpenAi).await?;
    let body = &inbound.body;
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Rejection::not_json());
    }
    let request: CompletionRequest = serde_json::from_slice(body).map_err(|e| {
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
    if request.prompt.is_none() {
        return Err(Rejection::bad_request(
            "Missing required parameter: 'prompt'.",
            Some("prompt"),
            Some("missing_required_parameter"),
        ));
    }
    let prompt_tokens = request.prompt_tokens();
    // The API's default is 16 tokens.
    let cap = request.max_tokens.unwrap_or(16);
    if cap == 0 {
        return Err(Rejection::bad_request(
            "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.",
            Some("max_tokens"),
            Some("integer_below_min_value"),
        ));
    }

    let ask = Ask {
        api: Api::Completions,
        streaming: request.stream == Some(true),
        prompt_tokens,
        max_output: Some(cap),
        has_tools: false,
    };
    let admitted = match inbound.admit(state, ask) {
        Ok(admitted) => admitted,
        Err(fault) => return Ok(*fault),
    };
    let mut draw = admitted.draw;
    let drawn = draw.tokens();
    let (tokens, finish) = if cap < u64::from(drawn) {
        (cap as u32, FinishReason::Length)
    } else {
        (drawn, FinishReason::Stop)
    };

    if request.stream == Some(true) {
        state.metrics.request(RouteKind::CompletionsStream);
        let plan = StreamPlan {
            model,
            tokens,
            prompt_tokens,
            api: StreamApi::Completions {
                finish,
                include_usage: request.include_usage(),
            },
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

    state.metrics.request(RouteKind::Completions);
    let delay_us = draw.response_us(tokens);
    inbound.wait(state, delay_us).await;
    let content = state.catalog.content(tokens);
    let payload = state.catalog.completions.completion(finish).fill(&Fill {
        model: &model,
        content: &content,
        prompt_tokens,
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
