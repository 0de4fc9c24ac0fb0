//! `POST /v1/responses`: OpenAI's Responses API, streaming and not.

use bytes::Bytes;
use gatebench_shared::wire::responses::ResponsesRequest;

use super::{echoing_answer, ApiRoute, Asked, Drawn, Ending};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::catalog::payload::Payload;
use crate::catalog::Outcome;
use crate::config::Api;
use crate::state::State;

/// OpenAI's Responses API.
pub struct Responses;

impl ApiRoute for Responses {
    const API: Api = Api::Responses;
    const TOOLS: bool = true;
    type Request<'a> = ResponsesRequest<'a>;
    /// The echoed parameters, as they fill the response object's echo slot.
    type Extra = Bytes;

    #[inline]
    fn read(
        state: &State,
        inbound: &Inbound,
        request: ResponsesRequest<'_>,
    ) -> Result<Asked<Bytes>, Rejection> {
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
        if let Some(cap) = cap.filter(|c| *c < 16) {
            return Err(Rejection::bad_request(
                format!(
                    "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {cap} instead."
                ),
                Some("max_output_tokens"),
                Some("integer_below_min_value"),
            ));
        }
        Ok(Asked {
            model,
            prompt_tokens: input_tokens,
            cap,
            streaming: request.stream == Some(true),
            extra: state.catalog.responses.echo(request.params().as_ref()),
        })
    }

    fn stream(asked: &Asked<Bytes>, ending: Ending) -> Option<StreamApi> {
        Some(StreamApi::Responses {
            outcome: outcome(ending),
            echo: Box::new(asked.extra.clone()),
        })
    }

    #[inline]
    fn whole(state: &State, asked: &Asked<Bytes>, drawn: &Drawn) -> Payload {
        let outcome = outcome(drawn.ending);
        if let Some(tool) = &drawn.tool {
            return tool.responses_whole(state, outcome, &asked.extra);
        }
        let template = state.catalog.responses.response(outcome);
        echoing_answer(state, template, asked, drawn, &asked.extra)
    }
}

/// `status`: `incomplete` when the cap or the content filter cut the answer.
fn outcome(ending: Ending) -> Outcome {
    match ending {
        Ending::Done => Outcome::Completed,
        Ending::Capped => Outcome::Incomplete,
        Ending::Filtered => Outcome::Filtered,
    }
}
