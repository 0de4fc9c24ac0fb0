//! `POST /model/{modelId}/converse` and `/converse-stream`: AWS Bedrock's Converse API. The
//! model is in the path (`router::model_in_path`); whether the answer streams is too, so each
//! is its own route type ([`Bedrock<false>`], [`Bedrock<true>`]). A stream is AWS's binary event
//! stream.

use gatebench_shared::wire::bedrock::{ConverseRequest, StopReason};

use super::{text_answer, ApiRoute, Asked, Drawn, Ending};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::catalog::payload::Payload;
use crate::config::Api;
use crate::state::State;

/// Bedrock's `converse` (`STREAM` false) or `converse-stream` (true).
pub struct Bedrock<const STREAM: bool>;

impl<const STREAM: bool> ApiRoute for Bedrock<STREAM> {
    const API: Api = Api::Bedrock;
    type Request<'a> = ConverseRequest;
    type Extra = ();

    fn read(
        _state: &State,
        inbound: &Inbound,
        request: ConverseRequest,
    ) -> Result<Asked<()>, Rejection> {
        let Some(model) = inbound.echoed(&None) else {
            return Err(Rejection::bad_request(
                "The provided model identifier is invalid.",
                None,
                None,
            ));
        };
        if request.messages.as_ref().is_none_or(Vec::is_empty) {
            return Err(Rejection::bad_request(
                "A conversation must start with a user message. Try again with a conversation \
                 that starts with a user message.",
                None,
                None,
            ));
        }
        let cap = request.max_tokens();
        if cap == Some(0) {
            return Err(Rejection::bad_request(
                "1 validation error detected: Value '0' at 'inferenceConfig.maxTokens' failed \
                 to satisfy constraint: Member must have value greater than or equal to 1",
                None,
                None,
            ));
        }
        Ok(Asked {
            model,
            prompt_tokens: request.input_tokens(),
            cap,
            streaming: STREAM,
            extra: (),
        })
    }

    fn stream(_asked: &Asked<()>, ending: Ending) -> Option<StreamApi> {
        Some(StreamApi::Bedrock { stop: stop(ending) })
    }

    fn whole(state: &State, asked: &Asked<()>, drawn: &Drawn) -> Payload {
        text_answer(
            state,
            state.catalog.bedrock.whole(stop(drawn.ending)),
            asked,
            drawn,
        )
    }
}

/// `stopReason`: `max_tokens` when the cap cut the answer, `content_filtered` for the filter.
pub fn stop(ending: Ending) -> StopReason {
    match ending {
        Ending::Done => StopReason::EndTurn,
        Ending::Capped => StopReason::MaxTokens,
        Ending::Filtered => StopReason::ContentFiltered,
    }
}
