//! `POST /v1/embeddings` on the wire: deterministic unit vectors, base64 equal to the floats,
//! the configured dimensions, and OpenAI-shaped errors.

use base64::Engine as _;
use gatebench_tests::{start_mock, Client, Recorded};
use hyper::Method;
use mock_upstream::Config;
use serde_json::{json, Value};

async fn post(client: &mut Client, body: Value) -> Recorded {
    let bytes = serde_json::to_vec(&body).unwrap();
    client
        .send(
            Method::POST,
            "/v1/embeddings",
            &[("content-type", "application/json")],
            &bytes,
        )
        .await
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

#[tokio::test]
async fn vectors_are_deterministic_units_in_either_encoding() {
    let mock = start_mock(Config {
        embedding_dimensions: 64,
        ..Config::default()
    });
    let mut client = Client::connect(mock.local_addr()).await;
    let r = post(
        &mut client,
        json!({"model": "e", "input": ["a b", [1, 2, 3]]}),
    )
    .await;
    assert_eq!(r.status, 200);
    let body = r.json();
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    let a = floats(&body["data"][0]["embedding"]);
    assert_eq!(a.len(), 64);
    let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-3, "{norm}");
    assert_eq!(body["usage"]["prompt_tokens"], 1 + 3);

    let r = post(
        &mut client,
        json!({"model": "e", "input": "a b", "encoding_format": "base64"}),
    )
    .await;
    let encoded = r.json()["data"][0]["embedding"]
        .as_str()
        .unwrap()
        .to_string();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    let decoded: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(decoded, a, "base64 carries the same floats");

    let r = post(
        &mut client,
        json!({"model": "e", "input": "a b", "dimensions": 8}),
    )
    .await;
    assert_eq!(floats(&r.json()["data"][0]["embedding"]).len(), 8);

    for bad in [
        json!({"model": "e"}),
        json!({"model": "e", "input": []}),
        json!({"model": "e", "input": "x", "dimensions": 0}),
        json!({"model": "e", "input": "x", "encoding_format": "hex"}),
        json!({"input": "x"}),
    ] {
        let r = post(&mut client, bad.clone()).await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.json()["error"]["message"].is_string());
    }
}
