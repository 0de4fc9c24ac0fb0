//! The one path every API request takes: head check, receipt, body parse, the API's checks,
//! the model's context size, admission (faults, latency draw, rate limit), the output cap, tool calls, then a stream or a
//! whole answer when it is due, with the provider's headers and the rate-limit state.

use std::sync::Arc;

use hyper::{Request, Response};

use super::{ApiRoute, Drawn, Ending};
use crate::admission::inbound::{receive, Arrival, Ask, Inbound};
use crate::admission::rejection::Rejection;
use crate::admission::request::RequestBody;
use crate::answer::body::MockBody;
use crate::answer::sse::{SseStream, StreamPlan};
use crate::answer::tools::ToolAnswer;
use crate::catalog::payload::Payload;
use crate::catalog::FixedHeaders;
use crate::config::{Api, Provider};
use crate::observability::metrics::RouteKind;
use crate::state::State;
use crate::timing::prompt_cache::{CacheUsage, PromptCache};

/// `A`'s answer to a request it refused, in its provider's shape; counted as a request of the
/// route, refused.
pub fn refused<A: ApiRoute>(
    state: &State,
    provider: Provider,
    rejection: Rejection,
) -> Response<MockBody> {
    state.metrics.rejected(RouteKind::of(A::API, false));
    match provider {
        // Azure answers what its gateway refuses in its own shape (set where it is refused)
        // and the model's refusals in OpenAI's.
        Provider::OpenAi | Provider::Azure => rejection.into_response(),
        Provider::Anthropic => rejection.anthropic().into_response(),
        Provider::Gemini => rejection.gemini().into_response(),
        Provider::Bedrock => rejection.bedrock().into_response(),
    }
}

/// Answers a request to `A` on `provider`'s endpoint (its own, or Azure OpenAI's for the
/// OpenAI APIs) into `out`, or says why not (see [`refused`]). One future, awaited by the
/// handler directly: a wrapper future would be one more copy of this large state per request.
/// The answer is built where its caller keeps it: returned, it was copied at each level on its
/// way out, hundreds of bytes a time.
pub async fn answer<A: ApiRoute>(
    state: &Arc<State>,
    req: &mut Request<RequestBody>,
    arrival: Arrival<'_>,
    provider: Provider,
    out: &mut Option<Response<MockBody>>,
) -> Result<(), Rejection> {
    // A running slot first, while the future holds little (`--max-running`); boxed, so
    // its state does not enlarge every request's future.
    let running = match &state.prefill {
        None => None,
        Some(prefill) => match Box::pin(prefill.run()).await {
            Ok(running) => Some(Box::new(running)),
            Err(crate::timing::prefill::QueueFull) => {
                *out = Some(crate::admission::faults::response(429, provider));
                return Ok(());
            }
        },
    };
    if provider == Provider::Azure {
        super::azure::check_version(req.uri())?;
    }
    A::check_head(req.headers())?;
    let inbound = receive(state, req, arrival, provider).await?;
    let request = match A::read_plain(&inbound.body) {
        Some(request) => request,
        None => parse::<A::Request<'_>>(&inbound.body, provider)?,
    };
    let mut asked = A::read(state, &inbound, request)?;
    if let Some(counter) = &state.tokens {
        asked.prompt_tokens = counter.prompt_tokens(A::API, &inbound.body);
    }
    if let Some(window) = state.config.context_window.of(&asked.model) {
        let cap = if A::OUTPUT { asked.cap } else { None };
        if let Some(refusal) = super::context::exceeded(A::API, window, asked.prompt_tokens, cap) {
            return Err(refusal);
        }
    }

    let tools = if A::TOOLS {
        crate::answer::tools::scan(state, &inbound.body)
    } else {
        None
    };
    let tool_name = tools.as_ref().and_then(|t| t.callable());
    let ask = Ask {
        api: A::API,
        streaming: asked.streaming,
        prompt_tokens: asked.prompt_tokens,
        max_output: if A::OUTPUT { asked.cap } else { Some(0) },
        has_tools: tool_name.is_some(),
    };
    let admitted = match inbound.admit(state, ask) {
        Ok(admitted) => admitted,
        Err(fault) => {
            *out = Some(*fault);
            return Ok(());
        }
    };
    let cache = state
        .prompt_cache
        .as_ref()
        .and_then(|cache| looked_up::<A>(state, cache, &inbound, &asked));
    let mut draw = admitted.draw;
    if let (Some(prefill), Some(running)) = (&state.prefill, &running) {
        let read = cache.as_ref().map_or(0, |c| c.read);
        let uncached = asked.prompt_tokens.saturating_sub(read);
        prefilled(prefill, running, &mut draw, uncached, asked.streaming);
    }
    let drawn = draw.tokens();
    let (tokens, truncated) = capped(A::OUTPUT, asked.cap, drawn);
    if admitted.content_filter && A::OUTPUT {
        state.metrics.content_filter();
    }
    let ending = match (admitted.content_filter && A::OUTPUT, truncated) {
        (true, _) => Ending::Filtered,
        (false, true) => Ending::Capped,
        (false, false) => Ending::Done,
    };
    let tool = tool_name.filter(|_| admitted.tool_call).map(|name| {
        Box::new(ToolAnswer::new(
            name,
            &asked.model,
            asked.prompt_tokens,
            tokens,
        ))
    });

    if asked.streaming {
        if let Some(api) = A::stream(&asked, ending) {
            state.metrics.request(RouteKind::of(A::API, true));
            let plan = StreamPlan {
                model: asked.model,
                tokens,
                prompt_tokens: asked.prompt_tokens,
                api,
                fault: admitted.stream_fault,
                socket: inbound.socket,
                tool,
                cache,
                _running: running,
            };
            let stream = SseStream::new(state.clone(), plan, draw, inbound.start);
            let headers = fixed_headers(provider, None);
            let response = out.insert(Response::new(
                MockBody::stream(stream).with_headers(headers),
            ));
            admitted.limits.stamp(response, state);
            return Ok(());
        }
    }

    state.metrics.request(RouteKind::of(A::API, false));
    let delay_us = draw.response_us(tokens);
    if let Some(prefill) = &state.prefill {
        prefill.record_ttft(delay_us);
    }
    inbound.wait(state, delay_us).await;
    let drawn = Drawn {
        tokens,
        ending,
        tool,
    };
    let headers = fixed_headers(provider, Some(delay_us / 1000));
    let mut payload = A::whole(state, &asked, &drawn);
    if let Some(usage) = &cache {
        payload = reported(A::API, &payload, usage, asked.prompt_tokens);
    }
    let response = out.insert(Response::new(
        MockBody::whole(payload).with_headers(headers),
    ));
    admitted.limits.stamp(response, state);
    drop(running);
    Ok(())
}

/// The request's prefill time added to its draw: `uncached` prompt tokens at the per-token
/// time, slowed by the requests running, plus its wait for a slot. Out of line: the opt-in
/// path.
#[cold]
#[inline(never)]
fn prefilled(
    prefill: &crate::timing::prefill::Prefill,
    running: &crate::timing::prefill::Running,
    draw: &mut gatebench_shared::latency::RequestDraw,
    uncached: u64,
    streaming: bool,
) {
    let prefill_us = prefill.prefill_us(uncached, running.at_admission);
    draw.add_before_first_token(running.waited_us + prefill_us);
    if streaming {
        prefill.record_ttft(draw.planned_ttft_us());
    }
}

/// What the prompt cache read and wrote for this request (`None` for the APIs it does not
/// serve). Out of line: the opt-in path.
#[cold]
#[inline(never)]
fn looked_up<A: ApiRoute>(
    state: &State,
    cache: &PromptCache,
    inbound: &Inbound,
    asked: &super::Asked<A::Extra>,
) -> Option<Box<CacheUsage>> {
    if matches!(A::API, Api::Completions | Api::Embeddings) {
        return None;
    }
    let model = String::from_utf8_lossy(&asked.model);
    let usage = cache.serve(
        A::API,
        inbound.key(),
        &model,
        &inbound.body,
        asked.prompt_tokens,
        state.tokens.as_ref(),
    );
    Some(Box::new(usage))
}

/// A whole answer with the prompt cache's figures in its usage.
#[cold]
#[inline(never)]
fn reported(api: Api, payload: &Payload, usage: &CacheUsage, prompt_tokens: u64) -> Payload {
    let plain = payload.to_vec();
    let body =
        crate::timing::prompt_cache::report(api, &plain, usage, prompt_tokens).unwrap_or(plain);
    let mut out = Payload::new();
    out.push_bytes(&bytes::Bytes::from(body));
    out
}

/// Output tokens: the latency model's `drawn`, cut to the request's cap (for an API with
/// output); and whether the cap cut them.
fn capped(output: bool, cap: Option<u64>, drawn: u32) -> (u32, bool) {
    match cap {
        Some(cap) if output && cap < u64::from(drawn) => (cap as u32, true),
        _ => (drawn, false),
    }
}

/// The provider's fixed headers: of a stream (`None`), or of a whole answer that took
/// `processing_ms`.
fn fixed_headers(provider: Provider, processing_ms: Option<u64>) -> FixedHeaders {
    match (provider, processing_ms) {
        (Provider::OpenAi, None) => FixedHeaders::OpenAiSse,
        (Provider::OpenAi, Some(processing_ms)) => FixedHeaders::OpenAiJson { processing_ms },
        (Provider::Anthropic, None) => FixedHeaders::AnthropicSse,
        (Provider::Anthropic, Some(_)) => FixedHeaders::AnthropicJson,
        (Provider::Azure, None) => FixedHeaders::AzureSse,
        (Provider::Azure, Some(_)) => FixedHeaders::AzureJson,
        (Provider::Gemini, None) => FixedHeaders::GeminiSse,
        (Provider::Gemini, Some(_)) => FixedHeaders::GeminiJson,
        (Provider::Bedrock, None) => FixedHeaders::BedrockStream,
        (Provider::Bedrock, Some(_)) => FixedHeaders::BedrockJson,
    }
}

/// The body as `T`, or the provider's 400: a body that is JSON but not an object is named as
/// such; one that is not JSON gets the provider's parse error.
fn parse<'a, T: serde::Deserialize<'a>>(
    body: &'a [u8],
    provider: Provider,
) -> Result<T, Rejection> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let object = first == Some(&b'{');
    match provider {
        Provider::OpenAi | Provider::Azure => {
            // serde would read a JSON array as a struct in sequence form; the API takes only
            // objects.
            if !object && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() {
                return Err(Rejection::bad_request(
                    "Invalid request body: expected a JSON object.",
                    None,
                    None,
                ));
            }
            serde_json::from_slice(body).map_err(|e| openai_refusal::<T>(body, object, &e))
        }
        Provider::Anthropic => {
            if !object {
                return Err(Rejection::bad_request(
                    "There was an issue with your request body: expected a JSON object.",
                    None,
                    None,
                ));
            }
            serde_json::from_slice(body).map_err(|e| anthropic_refusal::<T>(body, &e))
        }
        Provider::Gemini => serde_json::from_slice(body).map_err(|e| gemini_refusal(&e)),
        Provider::Bedrock => serde_json::from_slice(body).map_err(|e| {
            Rejection::bad_request(format!("Malformed input request: {e}"), None, None)
        }),
    }
}

/// Google's 400 for a body that did not parse (cold, as above).
#[cold]
#[inline(never)]
fn gemini_refusal(e: &serde_json::Error) -> Rejection {
    let message = if e.is_data() {
        format!("Invalid value in the request payload: {e}.")
    } else {
        format!("Invalid JSON payload received. {e}.")
    };
    Rejection::bad_request(message, None, None)
}

/// OpenAI's 400 for a body that did not parse as `T`. Out of line and cold: the answered path
/// never runs it.
#[cold]
#[inline(never)]
fn openai_refusal<'a, T: serde::Deserialize<'a>>(
    body: &'a [u8],
    object: bool,
    e: &serde_json::Error,
) -> Rejection {
    if !(object && e.is_data()) {
        return Rejection::not_json();
    }
    match type_error::<T>(body) {
        Some((path, detail)) => {
            let mut rejection = Rejection::bad_request(
                format!("Invalid type for '{path}': {detail}."),
                None,
                Some("invalid_type"),
            );
            rejection.param = Some(path.into());
            rejection
        }
        None => Rejection::bad_request(format!("Invalid request body: {e}."), None, None),
    }
}

/// Anthropic's 400 for a body that did not parse as `T` (cold, as above).
#[cold]
#[inline(never)]
fn anthropic_refusal<'a, T: serde::Deserialize<'a>>(
    body: &'a [u8],
    e: &serde_json::Error,
) -> Rejection {
    let message = match type_error::<T>(body).filter(|_| e.is_data()) {
        Some((path, detail)) => format!("{path}: {detail}"),
        None => format!("There was an issue with your request body: {e}."),
    };
    Rejection::bad_request(message, None, None)
}

/// Where in the body a type error lies (`max_tokens`, `messages[0].role`) and serde's words for
/// it without their position in the text. Read again only once the parse has failed, so an
/// answered request pays nothing for it.
#[cold]
fn type_error<'a, T: serde::Deserialize<'a>>(body: &'a [u8]) -> Option<(String, String)> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let err = serde_path_to_error::deserialize::<_, T>(&mut deserializer).err()?;
    let path = err.path().to_string();
    let inner = err.into_inner().to_string();
    let detail = inner
        .rsplit_once(" at line ")
        .map_or(inner.as_str(), |(d, _)| d);
    (path != ".").then(|| (path, detail.to_string()))
}
