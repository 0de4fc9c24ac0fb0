//! Wire formats both sides must agree on, one file per provider API.

pub mod anthropic;
pub mod bedrock;
pub mod completions;
pub mod embeddings;
pub mod gemini;
pub mod openai;
pub mod responses;

/// Header carrying a request's schedule index. The mock draws that request's latency from it,
/// so the same request sent direct and through a gateway waits exactly as long.
pub const SEQ_HEADER: &str = "x-gatebench-seq";

pub mod tools {
    //! The `tools` a request offers, as far as a mock answering with a tool call needs them:
    //! the first tool's name (OpenAI's `{"type":"function","function":{"name"}}` or
    //! Anthropic's `{"name"}`), and whether `tool_choice` forbids calls.

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
    }

    impl ToolsRequest<'_> {
        /// The tool an answer would call, if the request offers one and allows calls.
        pub fn callable(&self) -> Option<&str> {
            first_callable(self.tools.as_deref(), self.tool_choice)
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
    }
}
