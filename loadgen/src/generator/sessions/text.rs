//! Deterministic text of a given length: a heading, then seeded three-letter words, cut to
//! 4 bytes a token (the estimate the mock and the results use). A session file's `tokens`
//! fields and the generator both write their messages with it.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::generator::corpus::synth::WORDS;

/// A generator seeded by two numbers (a seed and an index, say), mixed so that neighbouring
/// pairs draw unrelated streams.
pub(crate) fn rng_of(a: u64, b: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(mix(mix(a) ^ b))
}

/// SplitMix64's finaliser.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `tokens` tokens of text (`tokens` × 4 bytes, at least 1 byte) starting with `head`.
pub(crate) fn words(head: &str, tokens: u64, rng: &mut Pcg64Mcg) -> String {
    let len = (tokens.saturating_mul(4) as usize).max(1);
    let mut text = String::with_capacity(len + 4);
    text.push_str(head);
    while text.len() < len {
        text.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        text.push(' ');
    }
    // The heading may hold any UTF-8; cut on a character boundary.
    let mut cut = len.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_has_four_bytes_a_token_and_follows_its_seed() {
        for tokens in [1, 7, 2_000] {
            let text = words("Heading. ", tokens, &mut rng_of(1, 2));
            assert_eq!(text.len() as u64, tokens * 4);
            assert_eq!(text, words("Heading. ", tokens, &mut rng_of(1, 2)));
        }
        let a = words("", 100, &mut rng_of(1, 2));
        assert_ne!(a, words("", 100, &mut rng_of(1, 3)));
        assert_ne!(a, words("", 100, &mut rng_of(2, 2)));
        assert_eq!(words("aéé", 1, &mut rng_of(0, 0)), "aé");
    }
}
