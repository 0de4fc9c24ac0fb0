//! The APIs the mock answers, as data for one pipeline ([`pipeline`]): each API is a file that
//! says how its request is read and its whole answer drawn; everything around that (the
//! `x-mock-*` headers, the body, the fault and latency draws, the output cap, tool calls,
//! streaming, the wait, the provider's headers, the rate limit) is the pipeline's.
//!
//! Azure OpenAI speaks the OpenAI APIs; `azure` holds the one check its endpoints add (the
//! required `api-version`).
//!
//! A new provider is one new file here, an arm in `crate::admission::router` and one in `crate::serving::handler`.

mod azure;
mod bedrock;
mod chat;
mod chat_body;
mod completions;
mod context;
mod embeddings;
mod gemini;
mod messages;
mod pipeline;
mod responses;

use bytes::Bytes;
use hyper::HeaderMap;
use serde::Deserialize;

pub use bedrock::Bedrock;
pub use chat::Chat;
pub use completions::Completions;
pub use embeddings::Embeddings;
pub use gemini::Gemini;
pub use messages::Messages;
pub use pipeline::{answer, refused};
pub use responses::Responses;

use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::answer::sse::StreamApi;
use crate::answer::tools::ToolAnswer;
use crate::catalog::payload::Payload;
use crate::catalog::template::{Fill, Template, EMPTY};
use crate::config::Api;
use crate::state::State;

/// What a valid request asks of the pipeline, read by its API from the body.
#[derive(Debug)]
pub struct Asked<E> {
    /// The model as the request wrote it, JSON-escaped, to echo.
    pub model: Bytes,
    /// Tokens in the prompt (an estimate; see `MessagesScan::prompt_tokens`).
    pub prompt_tokens: u64,
    /// The request's cap on output tokens; `None` leaves the latency model's draw alone.
    pub cap: Option<u64>,
    pub streaming: bool,
    /// What else the API needs to draw its answer.
    pub extra: E,
}

/// How an answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The model ended it (`finish_reason: "stop"` and its kin).
    Done,
    /// The request's cap cut the draw (`"length"`, `max_tokens`, `incomplete`).
    Capped,
    /// The content filter ended it (`x-mock-fault: content_filter` or `--fault`):
    /// `"content_filter"`, Anthropic's `refusal`.
    Filtered,
}

/// What the pipeline decided for a valid, admitted request.
#[derive(Debug)]
pub struct Drawn {
    /// Output tokens: the latency model's draw, cut to the request's cap.
    pub tokens: u32,
    pub ending: Ending,
    /// A tool call instead of text (`--tool-calls`).
    pub tool: Option<Box<ToolAnswer>>,
}

/// One API: its request type, its checks and its answers. Implementations mark `read` and
/// `whole` `#[inline]`: the pipeline is generic over the API, and the old per-route functions
/// kept these steps inline (callgrind counts 40 instructions a chat request more without).
pub trait ApiRoute {
    /// The route, for `--fault`, the provider shape and metrics.
    const API: Api;
    /// Whether the answer produces output tokens (all but embeddings): the output counts
    /// toward `--rate-limit` and may be cut by the cap.
    const OUTPUT: bool = true;
    /// Whether a request's `tools` may be answered with a call (`--tool-calls`).
    const TOOLS: bool = false;

    /// The request body, borrowed from the bytes read.
    type Request<'a>: Deserialize<'a>;
    /// What the API keeps from the request beyond [`Asked`]'s fields.
    type Extra;

    /// Checks the request's head before its body is read.
    fn check_head(_headers: &HeaderMap) -> Result<(), Rejection> {
        Ok(())
    }

    /// The body read without serde, where the API has such a reader (chat): `None` leaves it to
    /// serde, which reads every body and words the refusals. A reader must take a body only
    /// when it reads it exactly as serde does.
    #[inline]
    fn read_plain(_body: &[u8]) -> Option<Self::Request<'_>> {
        None
    }

    /// The parsed body checked, or the provider's 400.
    fn read(
        state: &State,
        inbound: &Inbound,
        request: Self::Request<'_>,
    ) -> Result<Asked<Self::Extra>, Rejection>;

    /// The events a stream of this API sends (`None`: the API does not stream).
    fn stream(_asked: &Asked<Self::Extra>, _ending: Ending) -> Option<StreamApi> {
        None
    }

    /// The whole (non-streamed) answer's body.
    fn whole(state: &State, asked: &Asked<Self::Extra>, drawn: &Drawn) -> Payload;
}

/// `template` filled with the request's model and the drawn text: a whole answer of text.
#[inline]
pub fn text_answer<E>(
    state: &State,
    template: &Template,
    asked: &Asked<E>,
    drawn: &Drawn,
) -> Payload {
    echoing_answer(state, template, asked, drawn, &EMPTY)
}

/// [`text_answer`] with `echo` in the template's echo slot (the Responses API's parameters).
#[inline]
pub fn echoing_answer<E>(
    state: &State,
    template: &Template,
    asked: &Asked<E>,
    drawn: &Drawn,
    echo: &Bytes,
) -> Payload {
    template.fill(&Fill {
        model: &asked.model,
        content: &state.catalog.content(drawn.tokens),
        prompt_tokens: asked.prompt_tokens,
        completion_tokens: u64::from(drawn.tokens),
        sequence: 0,
        echo,
    })
}
