//! `POST /v1/chat/completions`: OpenAI's chat completions, streaming and not.

use gatebench_shared::wire::openai::{ChatRequest, FinishReason};

use super::{text_answer, ApiRoute, Asked, Drawn, Ending};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::catalog::payload::Payload;
use crate::catalog::Dialect;
use crate::config::{Api, Provider};
use crate::state::State;

/// OpenAI's chat completions.
pub struct Chat;

/// What a chat answer needs beyond the common fields.
#[derive(Debug)]
pub struct ChatExtra {
    /// `stream_options.include_usage`: the stream ends with a usage chunk.
    include_usage: bool,
    /// OpenAI's bodies, or Azure OpenAI's (with content filter verdicts).
    dialect: Dialect,
}

impl ApiRoute for Chat {
    const API: Api = Api::Chat;
    const TOOLS: bool = true;
    type Request<'a> = ChatRequest<'a>;
    type Extra = ChatExtra;

    #[inline]
    fn read_plain(body: &[u8]) -> Option<ChatRequest<'_>> {
        super::chat_body::read_seen(body)
    }

    #[inline]
    fn read(
        _state: &State,
        inbound: &Inbound,
        request: ChatRequest<'_>,
    ) -> Result<Asked<ChatExtra>, Rejection> {
        let Some(model) = inbound
            .echoed(&request.model)
            .filter(|model| !model.is_empty())
        else {
            return Err(Rejection::bad_request(
                "you must provide a model parameter",
                None,
                None,
            ));
        };
        let Some(messages) = request.messages else {
            return Err(Rejection::bad_request(
                "Missing required parameter: 'messages'.",
                Some("messages"),
                Some("missing_required_parameter"),
            ));
        };
        let cap = request.max_output_tokens();
        check(&request, messages.count, cap)?;
        Ok(Asked {
            model,
            prompt_tokens: messages.prompt_tokens(),
            cap,
            streaming: request.stream == Some(true),
            extra: ChatExtra {
                include_usage: request.include_usage(),
                dialect: match inbound.provider {
                    Provider::Azure => Dialect::Azure,
                    _ => Dialect::OpenAi,
                },
            },
        })
    }

    fn stream(asked: &Asked<ChatExtra>, ending: Ending) -> Option<StreamApi> {
        let (finish, include_usage) = (finish(ending), asked.extra.include_usage);
        Some(match asked.extra.dialect {
            Dialect::OpenAi => StreamApi::Chat {
                finish,
                include_usage,
            },
            Dialect::Azure => StreamApi::AzureChat {
                finish,
                include_usage,
            },
        })
    }

    #[inline]
    fn whole(state: &State, asked: &Asked<ChatExtra>, drawn: &Drawn) -> Payload {
        match &drawn.tool {
            Some(tool) => tool.openai_completion(state),
            None => text_answer(
                state,
                state
                    .catalog
                    .chat(asked.extra.dialect)
                    .completion(finish(drawn.ending)),
                asked,
                drawn,
            ),
        }
    }
}

/// `finish_reason`: `length` when the cap cut the answer, `content_filter` when the filter did.
pub fn finish(ending: Ending) -> FinishReason {
    match ending {
        Ending::Done => FinishReason::Stop,
        Ending::Capped => FinishReason::Length,
        Ending::Filtered => FinishReason::ContentFilter,
    }
}

/// A chat request's numbers checked as OpenAI checks them, in its order: the output cap, the
/// `messages` count, `stream_options` without streaming, then `n`.
#[inline]
fn check(request: &ChatRequest<'_>, messages: u32, cap: Option<u64>) -> Result<(), Rejection> {
    if cap == Some(0) {
        let param = if request.max_completion_tokens.is_some() {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        return Err(Rejection::bad_request(
            format!(
                "Invalid '{param}': integer below minimum value. Expected a value >= 1, \
                 but got 0 instead."
            ),
            Some(param),
            Some("integer_below_min_value"),
        ));
    }
    if messages == 0 {
        return Err(Rejection::bad_request(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but \
             got an empty array instead.",
            Some("messages"),
            Some("empty_array"),
        ));
    }
    if request.stream_options.is_some() && request.stream != Some(true) {
        return Err(Rejection::bad_request(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            Some("stream_options"),
            None,
        ));
    }
    check_n(request.n)
}

/// `n`: the mock answers one choice.
#[inline]
fn check_n(n: Option<u64>) -> Result<(), Rejection> {
    match n {
        None | Some(1) => Ok(()),
        Some(0) => Err(Rejection::bad_request(
            "Invalid 'n': integer below minimum value. Expected a value >= 1, but got \
             0 instead.",
            Some("n"),
            Some("integer_below_min_value"),
        )),
        Some(n) => Err(Rejection::bad_request(
            format!("Unsupported value: 'n' is {n}; this mock answers one choice (n = 1)."),
            Some("n"),
            Some("unsupported_value"),
        )),
    }
}
