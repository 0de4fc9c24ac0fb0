//! `--tokenizer`: how prompt tokens are counted, as a setting (the counting is
//! `crate::timing::tokens`).

/// How the mock counts a request's prompt tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tokenizer {
    /// Four bytes of text a token, plus each API's framing: free, deterministic, about 25% high
    /// for English.
    #[default]
    Estimate,
    /// OpenAI's `cl100k_base` BPE (GPT-4, GPT-3.5, text-embedding-3).
    Cl100k,
    /// OpenAI's `o200k_base` BPE (GPT-4o, o1 and later).
    O200k,
}

/// A `--tokenizer` setting the mock cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --tokenizer '{0}': expected estimate, cl100k or o200k")]
pub struct TokenizerError(pub String);

impl Tokenizer {
    pub fn parse(text: &str) -> Result<Tokenizer, TokenizerError> {
        match text.trim() {
            "estimate" => Ok(Tokenizer::Estimate),
            "cl100k" | "cl100k_base" => Ok(Tokenizer::Cl100k),
            "o200k" | "o200k_base" => Ok(Tokenizer::O200k),
            _ => Err(TokenizerError(text.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Estimate => "estimate",
            Tokenizer::Cl100k => "cl100k",
            Tokenizer::O200k => "o200k",
        }
    }
}
