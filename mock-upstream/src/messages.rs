//! `POST /v1/messages`: Anthropic's Messages API, streaming and not, from the same latency
//! model and token text as the chat route.

use std::sync::Arc;

use crate::request::RequestBody;
use gatebench_shared::wire::anthropic::{MessagesRequest, StopReason, VERSION_HEADER};
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
use crate::tools::ToolAnswer;

/// Answers a messages request; errors come back in OpenAI's shape and the caller turns them
/// into Anthropic's.
pub async fn messages(
    state: &Arc<State>,
    req: Request<RequestBody>,
    arrival: Arrival<'_>,
) -> Result<Response<MockBody>, Rejection> {
    if !req.headers().contains_key(VERSION_HEADER) {
        return Err(Rejection::bad_request(
            "anthropic-version: header is required",
            None,
            None,
        ));
    }
    let inbound = receive(state, req, arrival, Provider::Anthropic).await?;
    let body = &inbound.body;
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(Rejection::bad_request(
            "There was an issue with your request body: expected a JSON object.",
            None,
            None,
        ));
    }
    let request: MessagesRequest = serde_json::from_slice(body).map_err(|e| {
        Rejection::bad_request(
            format!("There was an issue with your request body: {e}."),
            None,
            None,
        )
    })?;
    let Some(model) = inbound.echoed(&request.model) else {
        return Err(Rejection::bad_request("model: Field required", None, None));
    };
    if request.messages.is_none() {
        return Err(Rejection::bad_request(
            "messages: Field required",
            None,
            None,
        ));
    }
    let cap = match request.max_tokens {
        None => {
            return Err(Rejection::bad_request(
                "max_tokens: Field required",
                None,
                None,
            ))
        }
        Some(0) => {
            return Err(Rejection::bad_request(
                "max_tokens: Input should be greater than or equal to 1",
                None,
                None,
            ))
        }
        Some(cap) => cap,
    };

    let input_tokens = request.input_tokens();
    let tools = crate::tools::scan(state, &inbound.body);
    let tool_name = tools.as_ref().and_then(|t| t.callable());
    let ask = Ask {
        api: Api::Messages,
        streaming: request.stream == Some(true),
        prompt_tokens: input_tokens,
        max_output: Some(cap),
        has_tools: tool_name.is_some(),
    };
    let admitted = match inbound.admit(state, ask) {
        Ok(admitted) => admitted,
        Err(fault) => return Ok(*fault),
    };
    let mut draw = admitted.draw;
    let drawn = draw.tokens();
    let (tokens, stop) = if cap < u64::from(drawn) {
        (cap as u32, StopReason::MaxTokens)
    } else {
        (drawn, StopReason::EndTurn)
    };
    let tool = tool_name
        .filter(|_| admitted.tool_call)
        .map(|name| Box::new(ToolAnswer::new(name, &model, input_tokens, tokens)));
    let catalog = &state.catalog.anthropic;

    if request.stream == Some(true) {
        state.metrics.request(RouteKind::MessagesStream);
        let plan = StreamPlan {
            model,
            tokens,
            prompt_tokens: input_tokens,
            api: StreamApi::Messages { stop },
            fault: admitted.stream_fault,
            socket: inbound.socket,
            tool,
        };
        let stream = SseStream::new(state.clone(), plan, draw, inbound.start);
        let mut response =
            Response::new(MockBody::stream(stream).with_headers(FixedHeaders::AnthropicSse));
        admitted.limits.stamp(&mut response, state);
        return Ok(response);
    }

    state.metrics.request(RouteKind::Messages);
    let delay_us = draw.response_us(tokens);
    inbound.wait(state, delay_us).await;
    let payload = match tool {
        Some(tool) => tool.anthropic_message(state),
        None => catalog.message(stop).fill(&Fill {
            model: &model,
            content: &state.catalog.content(tokens),
            prompt_tokens: input_tokens,
            completion_tokens: u64::from(tokens),
            sequence: 0,
        }),
    };
    let mut response =
        Response::new(MockBody::whole(payload).with_headers(FixedHeaders::AnthropicJson));
    admitted.limits.stamp(&mut response, state);
    Ok(response)
}
