//! `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`: Google's
//! Gemini API. The model is in the path (`router::model_in_path`); whether the answer streams is
//! too, so each is its own route type ([`Gemini<false>`], [`Gemini<true>`]).

use gatebench_shared::wire::gemini::{FinishReason, GenerateContentRequest};

use super::{text_answer, ApiRoute, Asked, Drawn, Ending};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::catalog::payload::Payload;
use crate::config::Api;
use crate::state::State;

/// Gemini's `generateContent` (`STREAM` false) or `streamGenerateContent` (true).
pub struct Gemini<const STREAM: bool>;

impl<const STREAM: bool> ApiRoute for Gemini<STREAM> {
    const API: Api = Api::Gemini;
    type Request<'a> = GenerateContentRequest;
    type Extra = ();

    fn read(
        _state: &State,
        inbound: &Inbound,
        request: GenerateContentRequest,
    ) -> Result<Asked<()>, Rejection> {
        let Some(model) = inbound.echoed(&None) else {
            return Err(Rejection::bad_request(
                "Model name is required.",
                None,
                None,
            ));
        };
        if request.contents.as_ref().is_none_or(Vec::is_empty) {
            return Err(Rejection::bad_request(
                "* GenerateContentRequest.contents: contents is not specified\n",
                None,
                None,
            ));
        }
        if request
            .generation_config
            .as_ref()
            .and_then(|c| c.candidate_count)
            .is_some_and(|n| n != 1)
        {
            return Err(Rejection::bad_request(
                "* GenerateContentRequest.generation_config.candidate_count: this mock answers \
                 one candidate (candidateCount = 1)\n",
                None,
                None,
            ));
        }
        let cap = request.max_output_tokens();
        if cap == Some(0) {
            return Err(Rejection::bad_request(
                "* GenerateContentRequest.generation_config.max_output_tokens: must be positive\n",
                None,
                None,
            ));
        }
        Ok(Asked {
            model,
            prompt_tokens: request.prompt_tokens(),
            cap,
            streaming: STREAM,
            extra: (),
        })
    }

    fn stream(_asked: &Asked<()>, ending: Ending) -> Option<StreamApi> {
        Some(StreamApi::Gemini {
            finish: finish(ending),
        })
    }

    fn whole(state: &State, asked: &Asked<()>, drawn: &Drawn) -> Payload {
        text_answer(
            state,
            state.catalog.gemini.whole(finish(drawn.ending)),
            asked,
            drawn,
        )
    }
}

/// `finishReason`: `MAX_TOKENS` when the cap cut the answer, `SAFETY` for the content filter.
pub fn finish(ending: Ending) -> FinishReason {
    match ending {
        Ending::Done => FinishReason::Stop,
        Ending::Capped => FinishReason::MaxTokens,
        Ending::Filtered => FinishReason::Safety,
    }
}
