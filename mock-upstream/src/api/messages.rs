//! `POST /v1/messages`: Anthropic's Messages API, streaming and not.

use gatebench_shared::wire::anthropic::{MessagesRequest, StopReason, VERSION_HEADER};
use hyper::HeaderMap;

use super::{text_answer, ApiRoute, Asked, Drawn, Ending};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::catalog::payload::Payload;
use crate::config::Api;
use crate::state::State;

/// Anthropic's Messages API.
pub struct Messages;

impl ApiRoute for Messages {
    const API: Api = Api::Messages;
    const TOOLS: bool = true;
    type Request<'a> = MessagesRequest<'a>;
    type Extra = ();

    fn check_head(headers: &HeaderMap) -> Result<(), Rejection> {
        if headers.contains_key(VERSION_HEADER) {
            Ok(())
        } else {
            Err(Rejection::bad_request(
                "anthropic-version: header is required",
                None,
                None,
            ))
        }
    }

    #[inline]
    fn read(
        _state: &State,
        inbound: &Inbound,
        request: MessagesRequest<'_>,
    ) -> Result<Asked<()>, Rejection> {
        let required =
            |field: &str| Rejection::bad_request(format!("{field}: Field required"), None, None);
        let model = inbound
            .echoed(&request.model)
            .ok_or_else(|| required("model"))?;
        if model.is_empty() {
            return Err(Rejection::bad_request(
                "model: String should have at least 1 character",
                None,
                None,
            ));
        }
        let Some(messages) = request.messages else {
            return Err(required("messages"));
        };
        let cap = match request.max_tokens {
            None => return Err(required("max_tokens")),
            Some(0) => {
                return Err(Rejection::bad_request(
                    "max_tokens: Input should be greater than or equal to 1",
                    None,
                    None,
                ))
            }
            Some(cap) => cap,
        };
        if messages.count == 0 {
            return Err(Rejection::bad_request(
                "messages: at least one message is required",
                None,
                None,
            ));
        }
        Ok(Asked {
            model,
            prompt_tokens: request.input_tokens(),
            cap: Some(cap),
            streaming: request.stream == Some(true),
            extra: (),
        })
    }

    fn stream(_asked: &Asked<()>, ending: Ending) -> Option<StreamApi> {
        Some(StreamApi::Messages { stop: stop(ending) })
    }

    #[inline]
    fn whole(state: &State, asked: &Asked<()>, drawn: &Drawn) -> Payload {
        match &drawn.tool {
            Some(tool) => tool.anthropic_message(state),
            None => text_answer(
                state,
                state.catalog.anthropic.message(stop(drawn.ending)),
                asked,
                drawn,
            ),
        }
    }
}

/// `stop_reason`: `max_tokens` when the cap cut the answer, `refusal` for the content filter.
fn stop(ending: Ending) -> StopReason {
    match ending {
        Ending::Done => StopReason::EndTurn,
        Ending::Capped => StopReason::MaxTokens,
        Ending::Filtered => StopReason::Refusal,
    }
}
