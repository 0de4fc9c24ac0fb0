//! HdrHistogram's percentile-distribution text (`.hgrm`), as wrk2 and HdrHistogram's own tools
//! print it, so the files load into the usual plotters. Values are in milliseconds.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

/// The percentile distribution of `h` (microseconds), values scaled to milliseconds.
pub fn percentile_distribution(h: &Histogram<u64>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    if h.is_empty() {
        let _ = writeln!(
            out,
            "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]",
            0.0, 0.0
        );
        let _ = writeln!(
            out,
            "#[Max     = {:>12.3}, Total count    = {:>12}]",
            0.0, 0
        );
        return out;
    }
    for v in h.iter_quantiles(5) {
        let q = v.quantile_iterated_to();
        let value_ms = v.value_iterated_to() as f64 / 1000.0;
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{:>12.3} {:>14.12} {:>10} {:>14.2}",
                value_ms,
                q,
                h.count_between(0, v.value_iterated_to()),
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(out, "{:>12.3} {:>14.12} {:>10}", value_ms, q, h.len());
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]",
        h.mean() / 1000.0,
        h.stdev() / 1000.0
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.3}, Total count    = {:>12}]",
        h.max() as f64 / 1000.0,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        h.buckets(),
        h.distinct_values()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_ends_at_the_max_with_the_total() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let text = percentile_distribution(&h);
        let last = text
            .lines()
            .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
            .unwrap();
        let fields: Vec<&str> = last.split_whitespace().collect();
        assert_eq!(fields[1].parse::<f64>().unwrap(), 1.0);
        assert_eq!(fields[2], "10000");
        assert!(text.contains("Total count    =        10000"));
        assert!(text.contains("#[Max     =       10.007"));
    }
}
