//! The histograms every recording starts from: 1 µs to 1 h, values clamped into it.

use hdrhistogram::Histogram;

/// Highest value a histogram holds: one hour in microseconds (larger values are clamped).
pub const MAX_US: u64 = 3_600_000_000;

/// An empty histogram of 1 µs .. 1 h (values are clamped into it) with `sigfig` digits.
pub fn new_histogram(sigfig: u8) -> Histogram<u64> {
    // Invariant: 1..1h with 2 or 3 significant digits is a valid range.
    let mut histogram =
        Histogram::new_with_bounds(1, MAX_US, sigfig).expect("valid histogram bounds");
    // The counts start as untouched zero pages, which become resident one by one as values
    // land in them; writing them now makes the memory a run will use resident from its start,
    // so a growing RSS means a leak, not a rare latency.
    histogram.reset();
    histogram
}
