//! Wire formats both sides must agree on, one file per provider API.

pub mod anthropic;
pub mod bedrock;
pub mod completions;
pub mod embeddings;
pub mod gemini;
pub mod openai;
pub mod responses;
pub mod scan;

/// Header carrying a request's schedule index. The mock draws that request's latency from it,
/// so the same request sent direct and through a gateway waits exactly as long.
pub const SEQ_HEADER: &str = "x-gatebench-seq";

pub mod tools {
    //! The `tools` a request offers, as far as a mock answering with a tool call needs them:
    //! the first tool's name (OpenAI's `{"type":"function","function":{"name"}}` or
    //! Anthropic's `{"name"}`), whether `tool_choice` forbids calls, and whether the request
    //! ends with a tool's result (the turn an agent loop ends on: answered with text).

    use std::borrow::Cow;

    use serde::Deserialize;
    use serde_json::value::RawValue;

    use super::openai::borrowed_str;

    /// One entry of `tools`.
    #[derive(Debug, Deserialize)]
    pub struct Tool<'a> {
        /// Anthropic's (and OpenAI Responses') name.
        #[serde(borrow, default, deserialize_with = "borrowed_str")]
        pub name: Option<Cow<'a, str>>,
        /// OpenAI chat's `function` object.
        #[serde(borrow, default)]
        pub function: Option<Function<'a>>,
    }

    #[derive(Debug, Deserialize)]
    pub struct Function<'a> {
        #[serde(borrow, default, deserialize_with = "borrowed_str")]
        pub name: Option<Cow<'a, str>>,
    }

    /// The tool fields of a chat or messages request, read apart from the rest (only a mock
    /// that answers with tool calls reads them, so the common scan stays small).
    #[derive(Debug, Deserialize)]
    pub struct ToolsRequest<'a> {
        #[serde(borrow, default)]
        pub tools: Option<Vec<Tool<'a>>>,
        #[serde(borrow, default)]
        pub tool_choice: Option<&'a RawValue>,
        /// Chat's and Anthropic's messages, unread until the last is looked at.
        #[serde(borrow, default)]
        pub messages: Option<Vec<&'a RawValue>>,
        /// The Responses API's input: a string or items.
        #[serde(borrow, default)]
        pub input: Option<&'a RawValue>,
    }

    /// What says whether a message or input item is a tool's result.
    #[derive(Debug, Deserialize)]
    struct Turn<'a> {
        #[serde(borrow, default, deserialize_with = "borrowed_str")]
        role: Option<Cow<'a, str>>,
        #[serde(borrow, default, rename = "type", deserialize_with = "borrowed_str")]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        content: Option<&'a RawValue>,
    }

    /// A content block's `type`.
    #[derive(Debug, Deserialize)]
    struct Block<'a> {
        #[serde(borrow, default, rename = "type", deserialize_with = "borrowed_str")]
        kind: Option<Cow<'a, str>>,
    }

    impl ToolsRequest<'_> {
        /// The tool an answer would call, if the request offers one, allows calls and does
        /// not end with a tool's result.
        pub fn callable(&self) -> Option<&str> {
            if self.ends_with_tool_result() {
                return None;
            }
            first_callable(self.tools.as_deref(), self.tool_choice)
        }

        /// Whether the last message is a tool's result: chat's `role: "tool"`, a Responses
        /// `function_call_output` item, or an Anthropic user message with a `tool_result`
        /// block.
        pub fn ends_with_tool_result(&self) -> bool {
            let items: Vec<&RawValue>;
            let last = match (&self.messages, self.input) {
                (Some(messages), _) => messages.last().copied(),
                (None, Some(input)) => {
                    items = serde_json::from_str(input.get()).unwrap_or_default();
                    items.last().copied()
                }
                (None, None) => None,
            };
            let Some(turn) = last.and_then(|m| serde_json::from_str::<Turn>(m.get()).ok()) else {
                return false;
            };
            match (turn.role.as_deref(), turn.kind.as_deref()) {
                (Some("tool"), _) | (_, Some("function_call_output")) => true,
                (Some("user"), _) => turn.content.is_some_and(|content| {
                    serde_json::from_str::<Vec<Block>>(content.get()).is_ok_and(|blocks| {
                        blocks
                            .iter()
                            .any(|b| b.kind.as_deref() == Some("tool_result"))
                    })
                }),
                _ => false,
            }
        }
    }

    /// The tool a request's answer would call: the first named one, unless `tool_choice` is
    /// `"none"` (OpenAI) or `{"type":"none"}` (Anthropic).
    pub fn first_callable<'t>(
        tools: Option<&'t [Tool<'_>]>,
        tool_choice: Option<&RawValue>,
    ) -> Option<&'t str> {
        if let Some(choice) = tool_choice {
            let text = choice.get();
            let none = text == "\"none\""
                || serde_json::from_str::<serde_json::Value>(text)
                    .is_ok_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("none"));
            if none {
                return None;
            }
        }
        tools?.iter().find_map(|tool| {
            tool.function
                .as_ref()
                .and_then(|f| f.name.as_deref())
                .or(tool.name.as_deref())
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_first_named_tool_of_either_shape_unless_choice_is_none() {
            let openai: Vec<Tool> = serde_json::from_str(
                r#"[{"type":"function","function":{"name":"get_weather","parameters":{}}}]"#,
            )
            .unwrap();
            assert_eq!(first_callable(Some(&openai), None), Some("get_weather"));
            let anthropic: Vec<Tool> =
                serde_json::from_str(r#"[{"name":"lookup","input_schema":{}}]"#).unwrap();
            assert_eq!(first_callable(Some(&anthropic), None), Some("lookup"));
            let none: Box<RawValue> = serde_json::from_str("\"none\"").unwrap();
            assert_eq!(first_callable(Some(&openai), Some(&none)), None);
            let none: Box<RawValue> = serde_json::from_str(r#"{"type":"none"}"#).unwrap();
            assert_eq!(first_callable(Some(&anthropic), Some(&none)), None);
            let auto: Box<RawValue> = serde_json::from_str("\"auto\"").unwrap();
            assert_eq!(
                first_callable(Some(&openai), Some(&auto)),
                Some("get_weather")
            );
            assert_eq!(first_callable(None, None), None);
        }

        fn ends(body: &str) -> bool {
            let request: ToolsRequest = serde_json::from_str(body).unwrap();
            request.ends_with_tool_result()
        }

        #[test]
        fn a_request_ending_with_a_tool_result_is_told_in_every_shape() {
            let tools = r#""tools":[{"name":"f"}]"#;
            let chat = format!(
                r#"{{{tools},"messages":[{{"role":"user","content":"x"}},{{"role":"assistant","tool_calls":[]}},{{"role":"tool","tool_call_id":"c","content":"42"}}]}}"#
            );
            assert!(ends(&chat));
            let request: ToolsRequest = serde_json::from_str(&chat).unwrap();
            assert_eq!(request.callable(), None);
            assert!(!ends(&format!(
                r#"{{{tools},"messages":[{{"role":"tool","content":"42"}},{{"role":"user","content":"again"}}]}}"#
            )));
            assert!(ends(
                r#"{"input":[{"role":"user","content":"x"},{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"42"}]}"#
            ));
            assert!(!ends(r#"{"input":"a tool_result, in words"}"#));
            assert!(ends(
                r#"{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"42"}]}]}"#
            ));
            assert!(!ends(
                r#"{"messages":[{"role":"user","content":[{"type":"text","text":"tool_result"}]}]}"#
            ));
            assert!(!ends(r#"{"messages":[{"role":"user","content":"x"}]}"#));
            assert!(!ends(r#"{}"#));
        }
    }
}
