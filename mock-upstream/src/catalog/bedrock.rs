//! AWS Bedrock's Converse API, pre-encoded: the whole response, and every event of a stream as
//! a whole event stream message, checksum included (a token's delta is one of the seventeen
//! texts tokens cycle through, so each is encoded once). Only the last event, with the usage,
//! is framed per stream.

use bytes::Bytes;
use gatebench_shared::eventstream;
use gatebench_shared::wire::bedrock::{
    BlockStop, ConverseResponse, MessageStart, MessageStop, Metrics, Output, OutputMessage,
    StopReason, StreamMetadata, TextBlock, Usage,
};
use hyper::header::HeaderMap;

use super::{header_map, HeaderSet, REQUEST_ID};
use crate::catalog::template::{permanent, Slot, Template};

/// The pre-encoded Converse answers. Arrays are indexed by [`StopReason`].
#[derive(Debug)]
pub struct BedrockCatalog {
    whole: [Template; 3],
    message_start: Bytes,
    /// `contentBlockDelta` of the first token, then of each of the cycled tokens.
    deltas: Vec<Bytes>,
    block_stop: Bytes,
    message_stop: [Bytes; 3],
    error: Bytes,
    pub(super) json_headers: HeaderSet,
    pub(super) stream_headers: HeaderSet,
}

impl BedrockCatalog {
    /// `first` and `cycle` are the JSON-escaped token texts (`Catalog::token`).
    pub fn build(first: &Bytes, cycle: &[Bytes]) -> BedrockCatalog {
        let delta = |text: &Bytes| {
            let mut json = br#"{"contentBlockIndex":0,"delta":{"text":""#.to_vec();
            json.extend_from_slice(text);
            json.extend_from_slice(br#""}}"#);
            permanent(&eventstream::event("contentBlockDelta", &json))
        };
        BedrockCatalog {
            whole: StopReason::ALL.map(|stop| {
                let body = ConverseResponse {
                    output: Output {
                        message: OutputMessage {
                            role: "assistant",
                            content: [TextBlock {
                                text: Slot::CONTENT_SENTINEL,
                            }],
                        },
                    },
                    stop_reason: stop,
                    usage: Usage {
                        input_tokens: Slot::PROMPT_SENTINEL,
                        output_tokens: Slot::COMPLETION_SENTINEL,
                        total_tokens: Slot::TOTAL_SENTINEL,
                    },
                    metrics: Metrics { latency_ms: 0 },
                };
                // Invariant: the wire types always serialise.
                Template::parse(&serde_json::to_vec(&body).expect("response serialises"))
            }),
            message_start: event("messageStart", &MessageStart { role: "assistant" }),
            deltas: std::iter::once(first).chain(cycle).map(delta).collect(),
            block_stop: event(
                "contentBlockStop",
                &BlockStop {
                    content_block_index: 0,
                },
            ),
            message_stop: StopReason::ALL
                .map(|stop_reason| event("messageStop", &MessageStop { stop_reason })),
            error: permanent(&eventstream::exception(
                "modelStreamErrorException",
                br#"{"message":"The model encountered an error while processing the stream."}"#,
            )),
            json_headers: HeaderSet::new(headers("application/json")),
            stream_headers: HeaderSet::new(headers("application/vnd.amazon.eventstream")),
        }
    }

    /// The whole response.
    pub fn whole(&self, stop: StopReason) -> &Template {
        &self.whole[stop as usize]
    }

    /// `messageStart`.
    pub fn message_start(&self) -> &Bytes {
        &self.message_start
    }

    /// `contentBlockDelta` carrying token `k` (0-based).
    pub fn delta(&self, k: u32) -> &Bytes {
        let cycle = self.deltas.len() as u32 - 1;
        if k == 0 {
            &self.deltas[0]
        } else {
            &self.deltas[1 + (k % cycle) as usize]
        }
    }

    /// `contentBlockStop`.
    pub fn block_stop(&self) -> &Bytes {
        &self.block_stop
    }

    /// `messageStop` with the stop reason.
    pub fn message_stop(&self, stop: StopReason) -> &Bytes {
        &self.message_stop[stop as usize]
    }

    /// The stream's in-stream error (`modelStreamErrorException`).
    pub fn error(&self) -> &Bytes {
        &self.error
    }

    /// `metadata`, the stream's last event: the usage, framed for this stream.
    pub fn metadata(&self, input_tokens: u64, output_tokens: u64) -> Bytes {
        Bytes::from(eventstream::event(
            "metadata",
            &metadata_json(input_tokens, output_tokens),
        ))
    }

    /// [`Self::metadata`] with the prompt cache's figures in its usage.
    pub fn metadata_reported(
        &self,
        input_tokens: u64,
        output_tokens: u64,
        usage: &crate::timing::prompt_cache::CacheUsage,
    ) -> Bytes {
        let json = metadata_json(input_tokens, output_tokens);
        let reported = crate::timing::prompt_cache::report(
            crate::config::Api::Bedrock,
            &json,
            usage,
            input_tokens,
        );
        Bytes::from(eventstream::event("metadata", &reported.unwrap_or(json)))
    }
}

/// The `metadata` event's JSON.
fn metadata_json(input_tokens: u64, output_tokens: u64) -> Vec<u8> {
    {
        let metadata = StreamMetadata {
            usage: Usage {
                input_tokens,
                output_tokens,
                total_tokens: input_tokens + output_tokens,
            },
            metrics: Metrics { latency_ms: 0 },
        };
        // Invariant: the wire types always serialise.
        serde_json::to_vec(&metadata).expect("metadata serialises")
    }
}

fn event(event_type: &str, value: &impl serde::Serialize) -> Bytes {
    // Invariant: the wire types always serialise.
    let json = serde_json::to_vec(value).expect("event serialises");
    permanent(&eventstream::event(event_type, &json))
}

/// The headers Bedrock sends, with fixed, plausible values.
fn headers(content_type: &'static str) -> HeaderMap {
    header_map(content_type, &[("x-amzn-requestid", REQUEST_ID)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_a_checksummed_message_of_its_type() {
        let cycle = [Bytes::from_static(b" a"), Bytes::from_static(b" b")];
        let catalog = BedrockCatalog::build(&Bytes::from_static(b"Hi"), &cycle);
        let read = |bytes: &Bytes| eventstream::decode(bytes).unwrap().unwrap().0;
        let delta = read(catalog.delta(0));
        assert_eq!(delta.header(":event-type"), Some("contentBlockDelta"));
        let json: serde_json::Value = serde_json::from_slice(&delta.payload).unwrap();
        assert_eq!(json["delta"]["text"], "Hi");
        let json: serde_json::Value =
            serde_json::from_slice(&read(catalog.delta(3)).payload).unwrap();
        assert_eq!(json["delta"]["text"], " b");
        let stop = read(catalog.message_stop(StopReason::ContentFiltered));
        assert_eq!(stop.payload, br#"{"stopReason":"content_filtered"}"#);
        let metadata = read(&catalog.metadata(7, 3));
        let json: serde_json::Value = serde_json::from_slice(&metadata.payload).unwrap();
        assert_eq!(json["usage"]["totalTokens"], 10);
        assert_eq!(
            read(catalog.error()).header(":message-type"),
            Some("exception")
        );
    }
}
