//! `POST /v1/completions`: OpenAI's legacy completions, streaming and not.

use gatebench_shared::wire::completions::CompletionRequest;

use super::chat::finish;
use super::{text_answer, ApiRoute, Asked, Drawn, Ending};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::catalog::payload::Payload;
use crate::config::Api;
use crate::state::State;

/// OpenAI's legacy completions.
pub struct Completions;

impl ApiRoute for Completions {
    const API: Api = Api::Completions;
    type Request<'a> = CompletionRequest<'a>;
    /// `stream_options.include_usage`.
    type Extra = bool;

    #[inline]
    fn read(
        _state: &State,
        inbound: &Inbound,
        request: CompletionRequest<'_>,
    ) -> Result<Asked<bool>, Rejection> {
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
        // The API's default is 16 tokens.
        let cap = request.max_tokens.unwrap_or(16);
        if cap == 0 {
            return Err(Rejection::bad_request(
                "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.",
                Some("max_tokens"),
                Some("integer_below_min_value"),
            ));
        }
        Ok(Asked {
            model,
            prompt_tokens: request.prompt_tokens(),
            cap: Some(cap),
            streaming: request.stream == Some(true),
            extra: request.include_usage(),
        })
    }

    fn stream(asked: &Asked<bool>, ending: Ending) -> Option<StreamApi> {
        Some(StreamApi::Completions {
            finish: finish(ending),
            include_usage: asked.extra,
        })
    }

    #[inline]
    fn whole(state: &State, asked: &Asked<bool>, drawn: &Drawn) -> Payload {
        let catalog = &state.catalog.completions;
        text_answer(
            state,
            catalog.completion(finish(drawn.ending)),
            asked,
            drawn,
        )
    }
}
