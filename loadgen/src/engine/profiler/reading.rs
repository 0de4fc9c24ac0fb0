//! What a memory source reads at one edge of a window (cumulative since the process started),
//! and the window's own figures: the difference of its two edges.

use crate::results::profile::Folded;

/// Cumulative counts at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Allocations so far (objects, or calls to the allocator: the source says which).
    pub allocs: f64,
    /// Bytes allocated so far.
    pub bytes: f64,
    /// Frees so far, where the source counts them.
    pub frees: Option<f64>,
    /// Bytes live on the heap now, where the source knows it.
    pub live_heap_bytes: Option<f64>,
    /// Bytes allocated so far by stack (root first), where the source has stacks.
    pub stacks: Option<Folded>,
}

impl Reading {
    /// What happened between `before` and `self` (a later reading of the same process): counts
    /// subtracted, stacks subtracted key by key (none below zero, empty ones dropped), the live
    /// heap the later one's.
    pub fn since(&self, before: &Reading) -> Reading {
        let stacks = self.stacks.as_ref().map(|after| {
            let mut out = Folded::default();
            for (stack, &n) in &after.0 {
                let was = before
                    .stacks
                    .as_ref()
                    .and_then(|b| b.0.get(stack))
                    .copied()
                    .unwrap_or(0);
                if n > was {
                    out.0.insert(stack.clone(), n - was);
                }
            }
            out
        });
        Reading {
            allocs: (self.allocs - before.allocs).max(0.0),
            bytes: (self.bytes - before.bytes).max(0.0),
            frees: self.frees.zip(before.frees).map(|(a, b)| (a - b).max(0.0)),
            live_heap_bytes: self.live_heap_bytes,
            stacks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_the_difference_of_its_edges() {
        let folded = |pairs: &[(&str, u64)]| {
            Folded(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
        };
        let before = Reading {
            allocs: 10.0,
            bytes: 1000.0,
            frees: Some(8.0),
            live_heap_bytes: Some(500.0),
            stacks: Some(folded(&[("a;b", 600), ("a;c", 400)])),
        };
        let after = Reading {
            allocs: 30.0,
            bytes: 3000.0,
            frees: Some(20.0),
            live_heap_bytes: Some(700.0),
            stacks: Some(folded(&[("a;b", 1600), ("a;c", 400), ("a;d", 1000)])),
        };
        let w = after.since(&before);
        assert_eq!((w.allocs, w.bytes, w.frees), (20.0, 2000.0, Some(12.0)));
        assert_eq!(w.live_heap_bytes, Some(700.0));
        assert_eq!(w.stacks, Some(folded(&[("a;b", 1000), ("a;d", 1000)])));
    }
}
