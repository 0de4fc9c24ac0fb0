//! OpenAI's embeddings (`POST /v1/embeddings`): the request fields the mock reads and the list
//! it answers with.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::openai::borrowed_str;

#[derive(Debug, Deserialize)]
pub struct EmbeddingsRequest<'a> {
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    pub model: Option<Cow<'a, str>>,
    /// A string, an array of strings, an array of token ids, or an array of those arrays.
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
    #[serde(default)]
    pub dimensions: Option<u32>,
    #[serde(borrow, default)]
    pub encoding_format: Option<Cow<'a, str>>,
}

/// One input of a request, as the bytes its vector is derived from, and its token estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingInput<'a> {
    pub raw: &'a str,
    pub tokens: u64,
}

/// Why an `input` is not one the API takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'input' must be a string, an array of strings, an array of token ids, or an array of such arrays, and not empty")]
pub struct InputError;

/// The inputs of `raw`: one for a string or a token array, one per element otherwise.
pub fn inputs(raw: &RawValue) -> Result<Vec<EmbeddingInput<'_>>, InputError> {
    let text = raw.get();
    if text.starts_with('"') {
        return Ok(vec![string_input(text)]);
    }
    let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|_| InputError)?;
    if items.is_empty() {
        return Err(InputError);
    }
    if items.iter().all(|i| i.get().parse::<u64>().is_ok()) {
        return Ok(vec![EmbeddingInput {
            raw: text,
            tokens: items.len() as u64,
        }]);
    }
    items
        .iter()
        .map(|item| {
            let t = item.get();
            if t.starts_with('"') {
                Ok(string_input(t))
            } else {
                let ids: Vec<u64> = serde_json::from_str(t).map_err(|_| InputError)?;
                if ids.is_empty() {
                    return Err(InputError);
                }
                Ok(EmbeddingInput {
                    raw: t,
                    tokens: ids.len() as u64,
                })
            }
        })
        .collect()
}

fn string_input(text: &str) -> EmbeddingInput<'_> {
    EmbeddingInput {
        raw: text,
        tokens: (text.len().saturating_sub(2) as u64).div_ceil(4).max(1),
    }
}

/// A vector as floats, or as base64 of little-endian `f32`s.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Vector {
    Float(Vec<f32>),
    Base64(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct Embedding {
    pub object: &'static str,
    pub index: usize,
    pub embedding: Vector,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingUsage {
    pub prompt_tokens: u64,
    pub total_tokens: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingList<'a> {
    pub object: &'static str,
    pub data: Vec<Embedding>,
    pub model: &'a str,
    pub usage: EmbeddingUsage,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Vec<(String, u64)>, InputError> {
        let raw: Box<RawValue> = serde_json::from_str(json).unwrap();
        inputs(&raw).map(|v| {
            v.into_iter()
                .map(|i| (i.raw.to_string(), i.tokens))
                .collect()
        })
    }

    #[test]
    fn every_input_form_is_read() {
        assert_eq!(
            parse(r#""hello world""#).unwrap(),
            [(r#""hello world""#.into(), 3)]
        );
        assert_eq!(parse(r#"["a","bcdefgh"]"#).unwrap().len(), 2);
        assert_eq!(parse("[1,2,3]").unwrap(), [("[1,2,3]".into(), 3)]);
        assert_eq!(
            parse("[[1,2],[3]]").unwrap(),
            [("[1,2]".into(), 2), ("[3]".into(), 1)]
        );
        for bad in ["[]", "5", "[{\"a\":1}]", "[[]]", "null"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
