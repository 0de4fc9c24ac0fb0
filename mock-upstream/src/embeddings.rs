//! `POST /v1/embeddings`: deterministic vectors derived from each input and the seed, of the
//! configured (or asked) dimensions, as floats or base64.
//!
//! Unlike the chat route, the answer depends on the input, so it is built per request; a vector
//! of 1,536 floats costs tens of microseconds, which is still far below any real provider.

use std::borrow::Cow;
use std::sync::Arc;

use crate::request::RequestBody;
use base64::Engine as _;
use gatebench_shared::wire::embeddings::{
    inputs, Embedding, EmbeddingList, EmbeddingUsage, Vector,
};
use hyper::{Request, Response};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::body::MockBody;
use crate::catalog::FixedHeaders;
use crate::config::{Api, Provider, MAX_DIMENSIONS};
use crate::inbound::{receive, Arrival, Ask};
use crate::metrics::RouteKind;
use crate::rejection::Rejection;
use crate::state::State;

/// Answers an embeddings request (errors in OpenAI's shape).
pub async fn embeddings(
    state: &Arc<State>,
    req: Request<RequestBody>,
    arrival: Arrival<'_>,
) -> Result<Response<MockBody>, Rejection> {
    let inbound = receive(state, req, arrival, Provider::OpenAi).await?;
    let body = &inbound.body;
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Rejection::not_json());
    }
    let request: gatebench_shared::wire::embeddings::EmbeddingsRequest =
        serde_json::from_slice(body).map_err(|e| {
            if e.is_data() {
                Rejection::bad_request(format!("Invalid request body: {e}."), None, None)
            } else {
                Rejection::not_json()
            }
        })?;
    let Some(model) = request.model.as_deref() else {
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
    let dimensions = request
        .dimensions
        .unwrap_or(state.config.embedding_dimensions);
    if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
        return Err(Rejection::bad_request(
            format!("Invalid 'dimensions': expected 1 to {MAX_DIMENSIONS}, got {dimensions}."),
            Some("dimensions"),
            None,
        ));
    }
    let base64 = match request.encoding_format.as_deref() {
        None | Some("float") => false,
        Some("base64") => true,
        Some(other) => {
            return Err(Rejection::bad_request(
                format!("Invalid 'encoding_format': '{other}'. Expected 'float' or 'base64'."),
                Some("encoding_format"),
                None,
            ))
        }
    };

    let tokens = items.iter().map(|i| i.tokens).sum();
    let ask = Ask {
        api: Api::Embeddings,
        streaming: false,
        prompt_tokens: tokens,
        max_output: Some(0),
        has_tools: false,
    };
    let admitted = match inbound.admit(state, ask) {
        Ok(admitted) => admitted,
        Err(fault) => return Ok(*fault),
    };
    let mut draw = admitted.draw;
    state.metrics.request(RouteKind::Embeddings);
    // The whole-response latency (or the stream's e2e), as on the chat route.
    let delay_us = draw.response_us(draw.tokens());
    inbound.wait(state, delay_us).await;
    let seed = state.config.latency.seed;
    let data = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let v = vector(seed, item.raw.as_bytes(), dimensions);
            let embedding = if base64 {
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
        model: match &request.model {
            Some(Cow::Borrowed(m)) => m,
            _ => model,
        },
        usage: EmbeddingUsage {
            prompt_tokens: tokens,
            total_tokens: tokens,
        },
    };
    // Invariant: the wire types always serialise.
    let body = serde_json::to_vec(&list).expect("embeddings serialise");
    let mut response = Response::new(MockBody::owned(body).with_headers(
        FixedHeaders::OpenAiJson {
            processing_ms: delay_us / 1000,
        },
    ));
    admitted.limits.stamp(&mut response, state);
    Ok(response)
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
