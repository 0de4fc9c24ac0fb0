//! The APIs the mock answers and the providers whose shapes they speak: the names settings,
//! metrics and routes share.

/// The API route a request is for; a `--fault` may apply to one only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Chat,
    Messages,
    Responses,
    Embeddings,
    Completions,
    /// Google Gemini's `generateContent` and `streamGenerateContent`.
    Gemini,
    /// AWS Bedrock's Converse API (`converse` and `converse-stream`).
    Bedrock,
}

impl Api {
    pub const ALL: [Api; 7] = [
        Api::Chat,
        Api::Messages,
        Api::Responses,
        Api::Embeddings,
        Api::Completions,
        Api::Gemini,
        Api::Bedrock,
    ];

    /// The name a `--fault` setting uses.
    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Messages => "messages",
            Api::Responses => "responses",
            Api::Embeddings => "embeddings",
            Api::Completions => "completions",
            Api::Gemini => "gemini",
            Api::Bedrock => "bedrock",
        }
    }

    pub fn parse(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|api| api.name() == name)
    }

    /// The provider whose shapes the route speaks on its own path (Azure OpenAI's routes
    /// answer the OpenAI APIs on other paths).
    pub const fn provider(self) -> Provider {
        match self {
            Api::Messages => Provider::Anthropic,
            Api::Gemini => Provider::Gemini,
            Api::Bedrock => Provider::Bedrock,
            _ => Provider::OpenAi,
        }
    }
}

/// The provider whose shapes an answer takes: bodies, headers, keys and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    /// Azure OpenAI: OpenAI's APIs on deployment paths, with its own keys, headers, errors and
    /// content filter verdicts.
    Azure,
    /// Google's Gemini API.
    Gemini,
    /// AWS Bedrock.
    Bedrock,
}
