//! The mock's seeded draws for a request. `--seed` is one number; each such draw is a pure
//! function of it, the request's ordinal and the [`Stream`] the draw belongs to. Each stream
//! is apart from the others, so turning on faults or tool calls changes no latency draw, and
//! two runs with the same seed see the same per-request trace. (Embeddings use the seed too,
//! but hash it with their input, not with an ordinal: `mock-upstream`'s `api::embeddings`.)

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// What a seeded draw decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Output length, time to first token, inter-token gaps, a whole answer's time.
    Latency,
    /// Whether a request gets a configured fault (`--fault`).
    Faults,
    /// Whether a request offering tools is answered with a tool call (`--tool-calls`).
    ToolCalls,
}

impl Stream {
    /// What is XORed into the seed for this stream. Each is the one its draws were made with
    /// before the streams had names, so a seed gives the same trace as it always has: tool
    /// calls were drawn as faults of a seed XORed with `0x7001_CA11_0000_0000`, hence two
    /// constants (do not fold them into one of another value).
    fn salt(self) -> u64 {
        match self {
            Stream::Latency => 0,
            Stream::Faults => 0xFA17_5EED_0000_0001,
            Stream::ToolCalls => 0x7001_CA11_0000_0000 ^ 0xFA17_5EED_0000_0001,
        }
    }
}

/// The generator of request `ordinal`'s draws in `stream`.
pub fn rng(seed: u64, stream: Stream, ordinal: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(mix(seed ^ stream.salt(), ordinal))
}

/// A uniform draw in [0, 1) for request `ordinal` in `stream`: the first of its generator.
pub fn uniform(seed: u64, stream: Stream, ordinal: u64) -> f64 {
    rng(seed, stream, ordinal).random::<f64>()
}

/// splitmix64 finaliser over the pair, so neighbouring ordinals get unrelated streams.
fn mix(seed: u64, ordinal: u64) -> u64 {
    let mut z = seed
        .wrapping_add(ordinal.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_apart_and_each_is_a_pure_function() {
        let draws = |stream| (0..64).map(|i| uniform(9, stream, i)).collect::<Vec<_>>();
        assert_eq!(draws(Stream::Faults), draws(Stream::Faults));
        assert_ne!(draws(Stream::Faults), draws(Stream::ToolCalls));
        assert_ne!(draws(Stream::Faults), draws(Stream::Latency));
        assert_ne!(
            uniform(9, Stream::Faults, 3),
            uniform(10, Stream::Faults, 3)
        );
        assert!(draws(Stream::Latency)
            .iter()
            .all(|u| (0.0..1.0).contains(u)));
    }

    /// The same seed gives the same trace as before the streams had names: the generators as
    /// they were seeded then, written out.
    #[test]
    fn each_stream_draws_what_it_drew_before() {
        use rand::SeedableRng;
        let first = |z: u64| Pcg64Mcg::seed_from_u64(z).random::<f64>();
        for (seed, ordinal) in [(0, 0), (9, 3), (u64::MAX, 1 << 40)] {
            assert_eq!(
                uniform(seed, Stream::Faults, ordinal),
                first(mix(seed ^ 0xFA17_5EED_0000_0001, ordinal))
            );
            let tools_seed = seed ^ 0x7001_CA11_0000_0000;
            assert_eq!(
                uniform(seed, Stream::ToolCalls, ordinal),
                first(mix(tools_seed ^ 0xFA17_5EED_0000_0001, ordinal))
            );
            assert_eq!(
                rng(seed, Stream::Latency, ordinal).random::<u64>(),
                Pcg64Mcg::seed_from_u64(mix(seed, ordinal)).random::<u64>()
            );
        }
        // And splitmix64's first value, so a change to `mix` itself shows too.
        assert_eq!(mix(0, 0), 0xE220_A839_7B1D_CDAF);
    }
}
