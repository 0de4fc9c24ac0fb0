//! What one stream sends: its plan, decided when the request arrives, and each API's events,
//! filled into a sink (a payload on hyper's path, the write buffer on the own server's).

use std::os::fd::RawFd;

use bytes::Bytes;
use gatebench_shared::wire::anthropic::StopReason;
use gatebench_shared::wire::bedrock::StopReason as BedrockStop;
use gatebench_shared::wire::gemini::FinishReason as GeminiFinish;
use gatebench_shared::wire::openai::FinishReason;

use super::Layout;
use crate::answer::tools::ToolAnswer;
use crate::catalog::payload::{Payload, Sink};
use crate::catalog::template::{Fill, EMPTY};
use crate::catalog::{Dialect, EventText, Outcome, UsageKey};
use crate::config::{Api, StreamFault};
use crate::state::State;
use crate::timing::prompt_cache::CacheUsage;

/// What one stream sends, decided when the request arrives.
#[derive(Debug)]
pub struct StreamPlan {
    pub model: Bytes,
    pub tokens: u32,
    pub prompt_tokens: u64,
    pub api: StreamApi,
    /// A fault asked for with `x-mock-fault` or drawn from the `--fault` rates.
    pub fault: Option<StreamFault>,
    /// The HTTP/1 connection's socket, which a reset closes with RST (`None` on HTTP/2).
    pub socket: Option<RawFd>,
    /// A tool call instead of text (`--tool-calls`; chat and messages streams).
    pub tool: Option<Box<ToolAnswer>>,
    /// What the prompt cache read and wrote (`--prompt-cache on`), for the usage events.
    pub cache: Option<Box<CacheUsage>>,
    /// The request's running slot (`--max-running`, `--prefill-per-token`), freed with the
    /// stream.
    pub _running: Option<Box<crate::timing::prefill::Running>>,
}

/// The API whose events a stream sends.
#[derive(Debug, Clone)]
pub enum StreamApi {
    /// OpenAI chat completion chunks.
    Chat {
        finish: FinishReason,
        include_usage: bool,
    },
    /// Azure OpenAI's: its prompt verdict first, then the chunks with their verdicts (a variant
    /// of its own, so OpenAI's chunks pay nothing for it).
    AzureChat {
        finish: FinishReason,
        include_usage: bool,
    },
    /// Anthropic Messages API events.
    Messages { stop: StopReason },
    /// OpenAI Responses API events; `echo` fills the response object's echoed parameters
    /// (boxed: every stream moves this a few times, and the other APIs' variants are small).
    Responses { outcome: Outcome, echo: Box<Bytes> },
    /// OpenAI legacy completion chunks.
    Completions {
        finish: FinishReason,
        include_usage: bool,
    },
    /// Gemini's partial responses: one per token, the last with the finish reason and usage.
    Gemini { finish: GeminiFinish },
    /// Bedrock's event stream: `messageStart`, a `contentBlockDelta` per token,
    /// `contentBlockStop`, `messageStop`, `metadata`.
    Bedrock { stop: BedrockStop },
}

impl StreamPlan {
    /// The values that fill event `event`'s template: this stream's model and usage, with no
    /// content (set per token) and no echo.
    #[inline(always)]
    fn fill(&self, event: u32) -> Fill<'_> {
        Fill {
            model: &self.model,
            content: &EMPTY,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: u64::from(self.tokens),
            sequence: u64::from(event),
            echo: &EMPTY,
        }
    }

    /// Appends the provider's in-stream error event, sent in place of event `event`.
    pub(super) fn encode_error<S: Sink>(&self, state: &State, event: u32, sink: &mut S) {
        let error: &'static [u8] = match &self.api {
            StreamApi::Chat { .. } | StreamApi::AzureChat { .. } | StreamApi::Completions { .. } => {
                b"data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n"
            }
            StreamApi::Messages { .. } => {
                b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
            }
            StreamApi::Gemini { .. } => {
                b"data: {\"error\":{\"code\":500,\"message\":\"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting\",\"status\":\"INTERNAL\"}}\r\n\r\n"
            }
            StreamApi::Bedrock { .. } => {
                sink.put_event(state.catalog.bedrock.error());
                return;
            }
            StreamApi::Responses { echo, .. } => {
                let fill = Fill {
                    completion_tokens: 0,
                    echo,
                    ..self.fill(event)
                };
                state.catalog.responses.failed().fill_into(sink, &fill);
                return;
            }
        };
        sink.put_event(&Bytes::from_static(error));
    }

    /// The event that carries token 0.
    pub(super) fn first_token_event(&self) -> u32 {
        match self.api {
            StreamApi::Chat { .. } => 1,
            StreamApi::AzureChat { .. } => 2,
            StreamApi::Messages { .. } => 3,
            // A function call has no content part.
            StreamApi::Responses { .. } if self.tool.is_some() => 3,
            StreamApi::Responses { .. } => 4,
            StreamApi::Completions { .. } | StreamApi::Gemini { .. } => 0,
            StreamApi::Bedrock { .. } => 1,
        }
    }

    pub(super) fn events(&self) -> u32 {
        match self.api {
            StreamApi::Chat { include_usage, .. } => self.tokens + 3 + u32::from(include_usage),
            StreamApi::AzureChat { include_usage, .. } => {
                self.tokens + 4 + u32::from(include_usage)
            }
            StreamApi::Messages { .. } => self.tokens + 6,
            StreamApi::Responses { .. } if self.tool.is_some() => self.tokens + 6,
            StreamApi::Responses { .. } => self.tokens + 8,
            StreamApi::Completions { include_usage, .. } => {
                self.tokens + 2 + u32::from(include_usage)
            }
            // The last token's event carries the finish (an empty answer sends it alone).
            StreamApi::Gemini { .. } => self.tokens.max(1),
            StreamApi::Bedrock { .. } => self.tokens + 4,
        }
    }

    /// Where this stream's tokens lie among its events, worked out once per stream.
    pub(super) fn layout(&self) -> Layout {
        Layout {
            events: self.events(),
            first: self.first_token_event(),
            tokens: self.tokens,
        }
    }

    /// Appends event `event` of this stream to `sink`.
    pub(super) fn encode<S: Sink>(&self, state: &State, event: u32, sink: &mut S) {
        if let Some(usage) = &self.cache {
            return self.encode_reported(state, event, usage, sink);
        }
        self.encode_event(state, event, sink);
    }

    /// Event `event` with the prompt cache's figures in its usage, if it carries usage
    /// (kept out of line: the opt-in path).
    #[cold]
    #[inline(never)]
    fn encode_reported<S: Sink>(
        &self,
        state: &State,
        event: u32,
        usage: &CacheUsage,
        sink: &mut S,
    ) {
        let api = match self.api {
            StreamApi::Chat { .. } | StreamApi::AzureChat { .. } => Api::Chat,
            StreamApi::Messages { .. } => Api::Messages,
            StreamApi::Responses { .. } => Api::Responses,
            StreamApi::Gemini { .. } => Api::Gemini,
            StreamApi::Bedrock { .. } if event + 1 == self.events() => {
                let catalog = &state.catalog.bedrock;
                let tokens = u64::from(self.tokens);
                return sink.put_event(&catalog.metadata_reported(
                    self.prompt_tokens,
                    tokens,
                    usage,
                ));
            }
            StreamApi::Bedrock { .. } | StreamApi::Completions { .. } => {
                return self.encode_event(state, event, sink);
            }
        };
        let mut plain = bytes::BytesMut::new();
        self.encode_event(state, event, &mut plain);
        match crate::timing::prompt_cache::report(api, &plain, usage, self.prompt_tokens) {
            Some(reported) => sink.put_event(&Bytes::from(reported)),
            None => sink.put_event(&plain.freeze()),
        }
    }

    #[inline(always)]
    fn encode_event<S: Sink>(&self, state: &State, event: u32, sink: &mut S) {
        if let Some(tool) = &self.tool {
            if let Some(payload) = self.encode_tool(tool, state, event) {
                sink.put_payload(payload);
                return;
            }
        }
        match self.api {
            StreamApi::Chat {
                finish,
                include_usage,
            } => self.encode_chat(state, event, finish, include_usage, Dialect::OpenAi, sink),
            // Azure's choiceless first chunk, then the chunks as OpenAI's.
            StreamApi::AzureChat { .. } if event == 0 => {
                sink.put_event(state.catalog.chat(Dialect::Azure).prompt_filter())
            }
            StreamApi::AzureChat {
                finish,
                include_usage,
            } => self.encode_chat(
                state,
                event - 1,
                finish,
                include_usage,
                Dialect::Azure,
                sink,
            ),
            StreamApi::Messages { stop } => self.encode_messages(state, event, stop, sink),
            StreamApi::Responses { outcome, ref echo } => {
                self.encode_responses(state, event, outcome, echo, sink)
            }
            StreamApi::Completions {
                finish,
                include_usage,
            } => self.encode_completions(state, event, finish, include_usage, sink),
            StreamApi::Gemini { finish } => self.encode_gemini(state, event, finish, sink),
            StreamApi::Bedrock { stop } => self.encode_bedrock(state, event, stop, sink),
        }
    }

    /// Event `event` of a tool-call stream where it differs from a text stream (kept out of
    /// line: the opt-in path).
    #[cold]
    #[inline(never)]
    fn encode_tool(&self, tool: &ToolAnswer, state: &State, event: u32) -> Option<Payload> {
        match &self.api {
            StreamApi::Chat { include_usage, .. } => {
                tool.openai_chunk(state, event, *include_usage)
            }
            // Azure's first chunk is its prompt verdict; the call's chunks follow it.
            StreamApi::AzureChat { .. } if event == 0 => None,
            StreamApi::AzureChat { include_usage, .. } => {
                tool.openai_chunk(state, event - 1, *include_usage)
            }
            StreamApi::Messages { .. } => tool.anthropic_event(state, event),
            StreamApi::Responses { outcome, echo } => {
                Some(tool.responses_event(state, event, *outcome, echo))
            }
            StreamApi::Completions { .. }
            | StreamApi::Gemini { .. }
            | StreamApi::Bedrock { .. } => None,
        }
    }

    /// Every event pre-encoded and framed but the last, whose usage is this stream's.
    fn encode_bedrock<S: Sink>(&self, state: &State, event: u32, stop: BedrockStop, sink: &mut S) {
        let catalog = &state.catalog.bedrock;
        let n = self.tokens;
        match event {
            0 => sink.put_event(catalog.message_start()),
            e if e <= n => sink.put_event(catalog.delta(e - 1)),
            e if e == n + 1 => sink.put_event(catalog.block_stop()),
            e if e == n + 2 => sink.put_event(catalog.message_stop(stop)),
            _ => sink.put_event(&catalog.metadata(self.prompt_tokens, u64::from(n))),
        }
    }

    /// One partial response per token; the last with the finish reason and the usage.
    fn encode_gemini<S: Sink>(
        &self,
        state: &State,
        event: u32,
        finish: GeminiFinish,
        sink: &mut S,
    ) {
        let catalog = &state.catalog.gemini;
        let mut fill = self.fill(event);
        if self.tokens > 0 {
            fill.content = state.catalog.token(event);
        }
        if event + 1 >= self.tokens {
            catalog.last_chunk(finish).fill_into(sink, &fill);
        } else {
            catalog.chunk().fill_into(sink, &fill);
        }
    }

    /// Token chunks, the finish chunk, the usage chunk if asked, `[DONE]`.
    fn encode_completions<S: Sink>(
        &self,
        state: &State,
        event: u32,
        finish: FinishReason,
        include_usage: bool,
        sink: &mut S,
    ) {
        let catalog = &state.catalog.completions;
        let usage = UsageKey::of(include_usage);
        let mut fill = self.fill(event);
        let n = self.tokens;
        match event {
            e if e < n => {
                fill.content = state.catalog.token(e);
                catalog.chunk_text(usage).fill_into(sink, &fill)
            }
            e if e == n => catalog.chunk_finish(finish, usage).fill_into(sink, &fill),
            e if e == n + 1 && include_usage => catalog.chunk_usage().fill_into(sink, &fill),
            _ => sink.put_event(state.catalog.done()),
        }
    }

    fn encode_responses<S: Sink>(
        &self,
        state: &State,
        event: u32,
        outcome: Outcome,
        echo: &Bytes,
        sink: &mut S,
    ) {
        let (template, text) = state.catalog.responses.event(event, self.tokens, outcome);
        let whole;
        let content = match text {
            EventText::None => &EMPTY,
            EventText::Token(k) => state.catalog.token(k),
            EventText::Whole => {
                whole = state.catalog.content(self.tokens);
                &whole
            }
        };
        let fill = Fill {
            content,
            echo,
            ..self.fill(event)
        };
        template.fill_into(sink, &fill);
    }

    fn encode_messages<S: Sink>(&self, state: &State, event: u32, stop: StopReason, sink: &mut S) {
        let catalog = &state.catalog.anthropic;
        let mut fill = self.fill(event);
        let n = self.tokens;
        match event {
            0 => catalog.message_start().fill_into(sink, &fill),
            1 => sink.put_event(catalog.block_start()),
            2 => sink.put_event(catalog.ping()),
            e if e < 3 + n => {
                fill.content = state.catalog.token(e - 3);
                catalog.delta().fill_into(sink, &fill)
            }
            e if e == 3 + n => sink.put_event(catalog.block_stop()),
            e if e == 4 + n => catalog.message_delta(stop).fill_into(sink, &fill),
            _ => sink.put_event(catalog.message_stop()),
        }
    }

    #[inline(always)]
    fn encode_chat<S: Sink>(
        &self,
        state: &State,
        event: u32,
        finish: FinishReason,
        include_usage: bool,
        dialect: Dialect,
        sink: &mut S,
    ) {
        let catalog = state.catalog.chat(dialect);
        let usage = UsageKey::of(include_usage);
        let mut fill = self.fill(event);
        let n = self.tokens;
        match event {
            0 => catalog.chunk_role(usage).fill_into(sink, &fill),
            e if e <= n => {
                fill.content = state.catalog.token(e - 1);
                catalog.chunk_content(usage).fill_into(sink, &fill)
            }
            e if e == n + 1 => catalog.chunk_finish(finish, usage).fill_into(sink, &fill),
            e if e == n + 2 && include_usage => catalog.chunk_usage().fill_into(sink, &fill),
            _ => sink.put_event(state.catalog.done()),
        }
    }
}
