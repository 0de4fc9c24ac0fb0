//! Histograms as text: HdrHistogram's compressed V2 encoding in base64, the same form as an
//! interval log's histograms (the `HISTF…` strings every HdrHistogram library decodes).

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// `h` as base64 of its compressed V2 encoding.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Invariant: compressing into a Vec cannot fail for a valid histogram.
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("histogram serialises");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes what [`encode`] (or any HdrHistogram library) wrote.
pub fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("not an HdrHistogram: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_survive_the_round_trip() {
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in [1, 7, 250, 250, 99_999, 3_600_000_000] {
            h.record(v).unwrap();
        }
        let text = encode(&h);
        assert!(text.starts_with("HISTF"), "{text}");
        assert_eq!(decode(&text).unwrap(), h);
        assert!(decode("not a histogram").is_err());
        assert!(decode("AAAA").is_err());
    }
}
