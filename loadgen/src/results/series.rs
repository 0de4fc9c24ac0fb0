//! A metric's histograms, one per second, encoded back to back: what a run keeps for its
//! interval logs (`--hdr-log`), not written in its JSON.

use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// The histograms of one metric, one per second, encoded back to back.
#[derive(Default)]
pub struct Series {
    pub(crate) bytes: Vec<u8>,
    /// Where each second's encoding ends in `bytes`.
    pub(crate) ends: Vec<usize>,
}

impl std::fmt::Debug for Series {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Series")
            .field("seconds", &self.ends.len())
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl Series {
    /// Seconds held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when no second is held.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The histogram of second `i`.
    pub fn get(&self, i: usize) -> Option<Histogram<u64>> {
        let end = *self.ends.get(i)?;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]);
        // Invariant: decoding what `push` encoded.
        Some(
            Deserializer::new()
                .deserialize(&mut &self.bytes[start..end])
                .expect("histogram decodes"),
        )
    }
}
