//! `POST /v1/completions`: OpenAI's legacy completions, streaming and not, from the same latency
//! model and token text as the chat route.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use gatebench_shared::wire::completions::CompletionRequest;
use gatebench_shared::wire::openai::FinishReason;
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::time::Instant;

use crate::body::MockBody;
use crate::faults::{self, Overrides, Provider};
use crate::metrics::RouteKind;
use crate::rejection::Rejection;
use crate::request::{read_body, seq, BodyError};
use crate::sse::{SseStream, StreamApi, StreamPlan};
use crate::state::State;
use crate::template::{json_escaped, Fill};

/// Answers a legacy completion request (errors in OpenAI's shape).
pub async fn completions(
    state: &Arc<State>,
    req: Request<Incoming>,
    start: Option<Instant>,
) -> Result<Response<MockBody>, Rejection> {
    let seq = seq(req.headers()).map_err(|_| {
        Rejection::bad_request(
            "Invalid x-gatebench-seq header: expected a whole number.",
            None,
            None,
        )
    })?;
    crate::auth::check(
        state.config.require_api_key.as_deref(),
        req.headers(),
        Provider::OpenAi,
    )?;
    let overrides = Overrides::from_headers(req.headers())?;
    let start = start.or_else(|| overrides.changes_latency().then(Instant::now));
    let (parts, body) = req.into_parts();
    let limit = state.config.max_body_bytes;
    let body = read_body(&parts.headers, body, limit)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => Rejection::too_large(limit),
            BodyError::Read => {
                Rejection::bad_request("Could not read the request body.", None, None)
            }
        })?;
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Rejection::not_json());
    }
    let request: CompletionRequest = serde_json::from_slice(&body).map_err(|e| {
        if e.is_data() {
            Rejection::bad_request(format!("Invalid request body: {e}."), None, None)
        } else {
            Rejection::not_json()
        }
    })?;
    let model = match &request.model {
        Some(Cow::Borrowed(name)) => body.slice_ref(name.as_bytes()),
        Some(Cow::Owned(name)) => Bytes::from(json_escaped(name)),
        None => {
            return Err(Rejection::bad_request(
                "Missing required parameter: 'model'.",
                Some("model"),
                Some("missing_required_parameter"),
            ))
        }
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

    let ordinal = seq.unwrap_or_else(|| state.next_ordinal());
    if let Some(fault) = faults::check(state, &overrides, ordinal, Provider::OpenAi) {
        return Ok(fault);
    }
    let mut draw = faults::latency(state, &overrides).request(ordinal);
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
            fault: overrides.stream_fault,
        };
        let stream = SseStream::new(state.clone(), plan, draw, start);
        let mut response = Response::new(MockBody::stream(stream));
        *response.headers_mut() = state.catalog.sse_headers(0);
        return Ok(response);
    }

    state.metrics.request(RouteKind::Completions);
    let delay_us = draw.response_us(tokens);
    if let (Some(start), true) = (start, delay_us > 0) {
        let due = start + Duration::from_micros(delay_us);
        tokio::time::sleep_until(due).await;
        let late = Instant::now().saturating_duration_since(due);
        state.metrics.emission_error.record(late.as_micros() as u64);
    }
    let content = state.catalog.content(tokens);
    let payload = state.catalog.completions.completion(finish).fill(&Fill {
        model: &model,
        content: &content,
        prompt_tokens,
        completion_tokens: u64::from(tokens),
        sequence: 0,
    });
    let mut response = Response::new(MockBody::whole(payload));
    *response.headers_mut() = state.catalog.json_headers(delay_us / 1000);
    Ok(response)
}
