//! `POST /v1/embeddings`: deterministic vectors derived from each input and the seed, of the
//! configured (or asked) dimensions, as floats or base64.
//!
//! Unlike the other routes, the answer depends on the input, so it is built per request; a
//! vector of 1,536 floats costs tens of microseconds, which is still far below any real provider.

use base64::Engine as _;
use bytes::Bytes;
use gatebench_shared::wire::embeddings::{
    inputs, Embedding, EmbeddingList, EmbeddingUsage, EmbeddingsRequest, Vector,
};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{ApiRoute, Asked, Drawn};
use crate::admission::inbound::Inbound;
use crate::admission::rejection::Rejection;
use crate::catalog::payload::Payload;
use crate::config::{Api, MAX_DIMENSIONS};
use crate::state::State;

/// OpenAI's embeddings.
pub struct Embeddings;

/// What the vectors are drawn from.
#[derive(Debug)]
pub struct Vectors {
    /// The model's name, unescaped, as the list echoes it.
    model: String,
    /// Each input as the request wrote it (the vector's source).
    inputs: Vec<Bytes>,
    dimensions: u32,
    base64: bool,
}

impl ApiRoute for Embeddings {
    const API: Api = Api::Embeddings;
    const OUTPUT: bool = false;
    type Request<'a> = EmbeddingsRequest<'a>;
    type Extra = Vectors;

    #[inline]
    fn read(
        state: &State,
        inbound: &Inbound,
        request: EmbeddingsRequest<'_>,
    ) -> Result<Asked<Vectors>, Rejection> {
        let (Some(name), Some(model)) = (
            request.model.as_deref().filter(|m| !m.is_empty()),
            inbound.echoed(&request.model),
        ) else {
            return Err(Rejection::bad_request(
                "you must provide a model parameter",
                None,
                None,
            ));
        };
        let raw = request.input.ok_or_else(|| {
            Rejection::bad_request(
                "Missing required parameter: 'input'.",
                Some("input"),
                Some("missing_required_parameter"),
            )
        })?;
        let items = inputs(raw).map_err(|e| {
            Rejection::bad_request(format!("Invalid 'input': {e}."), Some("input"), None)
        })?;
        if items.iter().any(|i| i.raw == "\"\"") {
            return Err(Rejection::bad_request(
                "'$.input' is invalid. Please check the API reference: \
                 https://platform.openai.com/docs/api-reference.",
                Some("input"),
                None,
            ));
        }
        let dimensions = dimensions(request.dimensions, state.config.embedding_dimensions)?;
        let base64 = base64(request.encoding_format.as_deref())?;
        Ok(Asked {
            model,
            prompt_tokens: items.iter().map(|i| i.tokens).sum(),
            cap: None,
            streaming: false,
            extra: Vectors {
                model: name.to_string(),
                inputs: items
                    .iter()
                    .map(|i| Bytes::copy_from_slice(i.raw.as_bytes()))
                    .collect(),
                dimensions,
                base64,
            },
        })
    }

    #[inline]
    fn whole(state: &State, asked: &Asked<Vectors>, _drawn: &Drawn) -> Payload {
        let Vectors {
            model,
            inputs,
            dimensions,
            base64,
        } = &asked.extra;
        let seed = state.config.seed;
        let data = inputs
            .iter()
            .enumerate()
            .map(|(index, input)| {
                let v = vector(seed, input, *dimensions);
                let embedding = if *base64 {
                    let bytes: Vec<u8> = v.iter().flat_map(|f| f.to_le_bytes()).collect();
                    Vector::Base64(base64::engine::general_purpose::STANDARD.encode(bytes))
                } else {
                    Vector::Float(v)
                };
                Embedding {
                    object: "embedding",
                    index,
                    embedding,
                }
            })
            .collect();
        let list = EmbeddingList {
            object: "list",
            data,
            model,
            usage: EmbeddingUsage {
                prompt_tokens: asked.prompt_tokens,
                total_tokens: asked.prompt_tokens,
            },
        };
        // Invariant: the wire types always serialise.
        let mut payload = Payload::new();
        payload.push_bytes(&Bytes::from(
            serde_json::to_vec(&list).expect("embeddings serialise"),
        ));
        payload
    }
}

/// A unit vector of `dimensions` floats derived from `input` and `seed` alone.
pub fn vector(seed: u64, input: &[u8], dimensions: u32) -> Vec<f32> {
    // FNV-1a over the input, mixed with the seed.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in input {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = Pcg64Mcg::seed_from_u64(hash);
    let mut v: Vec<f32> = (0..dimensions)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::MIN_POSITIVE);
    for x in &mut v {
        *x /= norm;
    }
    v
}

/// `dimensions`, the mock's own when not asked: from 1 to [`MAX_DIMENSIONS`].
#[inline]
fn dimensions(asked: Option<u32>, default: u32) -> Result<u32, Rejection> {
    let dimensions = asked.unwrap_or(default);
    if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
        return Err(Rejection::bad_request(
            format!("Invalid 'dimensions': expected 1 to {MAX_DIMENSIONS}, got {dimensions}."),
            Some("dimensions"),
            None,
        ));
    }
    Ok(dimensions)
}

/// `encoding_format`: whether the vectors are sent as base64 (else as floats).
#[inline]
fn base64(format: Option<&str>) -> Result<bool, Rejection> {
    match format {
        None | Some("float") => Ok(false),
        Some("base64") => Ok(true),
        Some(other) => Err(Rejection::bad_request(
            format!("Invalid 'encoding_format': '{other}'. Expected 'float' or 'base64'."),
            Some("encoding_format"),
            None,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_unit_length_and_a_function_of_input_and_seed() {
        let a = vector(0, b"\"hello\"", 1536);
        assert_eq!(a.len(), 1536);
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{norm}");
        assert_eq!(a, vector(0, b"\"hello\"", 1536));
        assert_ne!(a, vector(0, b"\"hellp\"", 1536));
        assert_ne!(a, vector(1, b"\"hello\"", 1536));
    }
}
