//! OpenAI's Responses API, pre-encoded: the response object and every stream event, each with a
//! slot for its `sequence_number`.

use bytes::Bytes;
use gatebench_shared::wire::responses::{
    IncompleteDetails, ItemEvent, OutputMessage, OutputText, PartEvent, Response, ResponseError,
    ResponseEvent, ResponseParams, Status, TextDelta, TextDone, TokensDetails, Usage,
};

use crate::catalog::template::{permanent, EchoSlot, Slot, Template};

use super::CREATED;

/// `id` of every response, constant so the same request always gets the same bytes.
pub const RESPONSE_ID: &str = "resp_gatebench00000000000000000000";
/// `id` of the one output message.
pub const ITEM_ID: &str = "msg_gatebench00000000000000000000";

/// The pre-encoded Responses API answers. Arrays are indexed by [`Outcome`].
#[derive(Debug)]
pub struct ResponsesCatalog {
    response: [Template; 3],
    created: Template,
    in_progress: Template,
    item_added: Template,
    part_added: Template,
    delta: Template,
    text_done: Template,
    part_done: Template,
    item_done: [Template; 3],
    finished: [Template; 3],
    failed: Template,
    /// The echoed parameters of a request that set none ([`ResponseParams::DEFAULT`]).
    default_params: Bytes,
}

/// How a response ended: whole, cut by `max_output_tokens`, or cut by the content filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed = 0,
    Incomplete = 1,
    Filtered = 2,
}

impl Outcome {
    fn status(self) -> Status {
        match self {
            Outcome::Completed => Status::Completed,
            Outcome::Incomplete | Outcome::Filtered => Status::Incomplete,
        }
    }

    /// `incomplete_details.reason`, for a response that did not complete.
    fn reason(self) -> Option<&'static str> {
        match self {
            Outcome::Completed => None,
            Outcome::Incomplete => Some("max_output_tokens"),
            Outcome::Filtered => Some("content_filter"),
        }
    }

    /// The name of the stream's last event.
    pub fn last_event(self) -> &'static str {
        match self {
            Outcome::Completed => "response.completed",
            Outcome::Incomplete | Outcome::Filtered => "response.incomplete",
        }
    }
}

const OUTCOMES: [Outcome; 3] = [Outcome::Completed, Outcome::Incomplete, Outcome::Filtered];

impl ResponsesCatalog {
    pub fn build() -> ResponsesCatalog {
        let full_text = || OutputText {
            kind: "output_text",
            text: Slot::CONTENT_SENTINEL,
            annotations: [],
        };
        let empty_text = || OutputText {
            kind: "output_text",
            text: "",
            annotations: [],
        };
        let item = |status, content| OutputMessage {
            kind: "message",
            id: ITEM_ID,
            status,
            role: "assistant",
            content,
        };
        let seq = Slot::SEQUENCE_SENTINEL;
        ResponsesCatalog {
            response: OUTCOMES.map(|o| json(&response(o.status(), Some(o), true))),
            created: event(
                "response.created",
                &ResponseEvent {
                    kind: "response.created",
                    response: response(Status::InProgress, None, false),
                    sequence_number: seq,
                },
            ),
            in_progress: event(
                "response.in_progress",
                &ResponseEvent {
                    kind: "response.in_progress",
                    response: response(Status::InProgress, None, false),
                    sequence_number: seq,
                },
            ),
            item_added: event(
                "response.output_item.added",
                &ItemEvent {
                    kind: "response.output_item.added",
                    output_index: 0,
                    item: item(Status::InProgress, Vec::new()),
                    sequence_number: seq,
                },
            ),
            part_added: event(
                "response.content_part.added",
                &PartEvent {
                    kind: "response.content_part.added",
                    item_id: ITEM_ID,
                    output_index: 0,
                    content_index: 0,
                    part: empty_text(),
                    sequence_number: seq,
                },
            ),
            delta: event(
                "response.output_text.delta",
                &TextDelta {
                    kind: "response.output_text.delta",
                    item_id: ITEM_ID,
                    output_index: 0,
                    content_index: 0,
                    delta: Slot::CONTENT_SENTINEL,
                    sequence_number: seq,
                },
            ),
            text_done: event(
                "response.output_text.done",
                &TextDone {
                    kind: "response.output_text.done",
                    item_id: ITEM_ID,
                    output_index: 0,
                    content_index: 0,
                    text: Slot::CONTENT_SENTINEL,
                    sequence_number: seq,
                },
            ),
            part_done: event(
                "response.content_part.done",
                &PartEvent {
                    kind: "response.content_part.done",
                    item_id: ITEM_ID,
                    output_index: 0,
                    content_index: 0,
                    part: full_text(),
                    sequence_number: seq,
                },
            ),
            item_done: OUTCOMES.map(|o| {
                event(
                    "response.output_item.done",
                    &ItemEvent {
                        kind: "response.output_item.done",
                        output_index: 0,
                        item: item(o.status(), vec![full_text()]),
                        sequence_number: seq,
                    },
                )
            }),
            finished: OUTCOMES.map(|o| {
                let name = o.last_event();
                event(
                    name,
                    &ResponseEvent {
                        kind: name,
                        response: response(o.status(), Some(o), true),
                        sequence_number: seq,
                    },
                )
            }),
            failed: event(
                "response.failed",
                &ResponseEvent {
                    kind: "response.failed",
                    response: Response {
                        error: Some(ResponseError {
                            code: "server_error",
                            message: "The server had an error while processing your request.",
                        }),
                        ..response(Status::Failed, None, false)
                    },
                    sequence_number: seq,
                },
            ),
            default_params: params_fragment(&ResponseParams::DEFAULT),
        }
    }

    /// The `response.failed` event a stream's `error` fault sends.
    pub fn failed(&self) -> &Template {
        &self.failed
    }

    /// What fills a response's echo slot for a request that set `params` (`None`: none).
    pub fn echo(&self, params: Option<&ResponseParams<'_>>) -> Bytes {
        match params {
            None => self.default_params.clone(),
            Some(params) => Bytes::from(params_fragment_vec(params)),
        }
    }

    /// The non-streaming response.
    pub fn response(&self, outcome: Outcome) -> &Template {
        &self.response[outcome as usize]
    }

    /// Event `event` of a stream of `tokens` tokens; `Content` is a token for deltas and the
    /// whole text for the `done` events.
    pub fn event(&self, event: u32, tokens: u32, outcome: Outcome) -> (&Template, EventText) {
        let n = tokens;
        match event {
            0 => (&self.created, EventText::None),
            1 => (&self.in_progress, EventText::None),
            2 => (&self.item_added, EventText::None),
            3 => (&self.part_added, EventText::None),
            e if e < 4 + n => (&self.delta, EventText::Token(e - 4)),
            e if e == 4 + n => (&self.text_done, EventText::Whole),
            e if e == 5 + n => (&self.part_done, EventText::Whole),
            e if e == 6 + n => (&self.item_done[outcome as usize], EventText::Whole),
            _ => (&self.finished[outcome as usize], EventText::Whole),
        }
    }
}

/// What fills an event's text slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventText {
    None,
    Token(u32),
    Whole,
}

/// The response object: `output` and `usage` only once finished.
fn response(
    status: Status,
    outcome: Option<Outcome>,
    finished: bool,
) -> Response<'static, EchoSlot> {
    let output = if finished {
        vec![OutputMessage {
            kind: "message",
            id: ITEM_ID,
            status,
            role: "assistant",
            content: vec![OutputText {
                kind: "output_text",
                text: Slot::CONTENT_SENTINEL,
                annotations: [],
            }],
        }]
    } else {
        Vec::new()
    };
    Response {
        id: RESPONSE_ID,
        object: "response",
        created_at: CREATED,
        status,
        error: None,
        incomplete_details: outcome
            .and_then(Outcome::reason)
            .map(|reason| IncompleteDetails { reason }),
        model: Slot::MODEL_SENTINEL,
        output,
        params: EchoSlot,
        usage: finished.then_some(Usage {
            input_tokens: Slot::PROMPT_SENTINEL,
            input_tokens_details: TokensDetails {
                cached_tokens: Some(0),
                cache_write_tokens: Some(0),
                reasoning_tokens: None,
            },
            output_tokens: Slot::COMPLETION_SENTINEL,
            output_tokens_details: TokensDetails {
                cached_tokens: None,
                cache_write_tokens: None,
                reasoning_tokens: Some(0),
            },
            total_tokens: Slot::TOTAL_SENTINEL,
        }),
    }
}

/// The echoed parameters as they stand among a response's keys: their JSON without the braces.
fn params_fragment_vec(params: &ResponseParams<'_>) -> Vec<u8> {
    // Invariant: the wire types always serialise.
    let mut json = serde_json::to_vec(params).expect("parameters serialise");
    json.pop();
    json.remove(0);
    json
}

fn params_fragment(params: &ResponseParams<'_>) -> Bytes {
    permanent(&params_fragment_vec(params))
}

fn json(value: &impl serde::Serialize) -> Template {
    // Invariant: the wire types always serialise.
    Template::parse(&serde_json::to_vec(value).expect("response serialises"))
}

fn event(name: &str, data: &impl serde::Serialize) -> Template {
    let mut frame = format!("event: {name}\ndata: ").into_bytes();
    // Invariant: the wire types always serialise.
    serde_json::to_writer(&mut frame, data).expect("event serialises");
    frame.extend_from_slice(b"\n\n");
    Template::parse(&frame)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use gatebench_shared::wire::responses::ResponsesRequest;
    use serde_json::Value;

    use super::*;
    use crate::catalog::template::Fill;

    fn filled(template: &Template, echo: &Bytes) -> Value {
        let model = Bytes::from_static(b"gpt-4o");
        let content = Bytes::from_static(b"Hi");
        let text = template
            .fill(&Fill {
                model: &model,
                content: &content,
                prompt_tokens: 5,
                completion_tokens: 1,
                sequence: 7,
                echo,
            })
            .to_vec();
        let text = String::from_utf8(text).unwrap();
        let json = text
            .find("data: ")
            .map_or(text.as_str(), |at| text[at + 6..].trim_end());
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    #[test]
    fn a_response_echoes_the_parameters_asked_and_defaults_the_rest() {
        let catalog = ResponsesCatalog::build();
        let request: ResponsesRequest = serde_json::from_slice(
            br#"{"model":"m","input":"x","instructions":"Be brief.","temperature":0.25,
                 "tools":[{"type":"function","name":"f"}],"metadata":{"k":"v"},"store":true}"#,
        )
        .unwrap();
        let echo = catalog.echo(request.params().as_ref());
        let response = filled(catalog.response(Outcome::Completed), &echo);
        assert_eq!(response["instructions"], "Be brief.");
        assert_eq!(response["temperature"], 0.25);
        assert_eq!(response["tools"][0]["name"], "f");
        assert_eq!(response["metadata"]["k"], "v");
        assert_eq!(response["store"], true);
        assert_eq!(response["top_p"], 1.0);
        assert_eq!(response["tool_choice"], "auto");
        assert_eq!(response["model"], "gpt-4o");
        assert_eq!(response["usage"]["total_tokens"], 6);

        let plain: ResponsesRequest =
            serde_json::from_slice(br#"{"model":"m","input":"x"}"#).unwrap();
        assert!(plain.params().is_none());
        let response = filled(catalog.response(Outcome::Completed), &catalog.echo(None));
        assert_eq!(response["instructions"], Value::Null);
        assert_eq!(response["temperature"], 1.0);
        assert_eq!(response["tools"], serde_json::json!([]));
        assert_eq!(response["text"]["format"]["type"], "text");
    }

    #[test]
    fn the_failed_event_is_a_whole_response_with_its_sequence_number() {
        let catalog = ResponsesCatalog::build();
        let failed = filled(catalog.failed(), &catalog.echo(None));
        assert_eq!(failed["type"], "response.failed");
        assert_eq!(failed["sequence_number"], 7);
        assert_eq!(failed["response"]["id"], RESPONSE_ID);
        assert_eq!(failed["response"]["model"], "gpt-4o");
        assert_eq!(failed["response"]["status"], "failed");
        assert_eq!(failed["response"]["output"], serde_json::json!([]));
        assert_eq!(failed["response"]["error"]["code"], "server_error");
    }
}
