//! A plan's quantities as typed and as written: a rate (`5000`, `5k`) parsed, a duration
//! written as whole microseconds.

use std::time::Duration;

use crate::generator::plan_error::PlanError;

/// Parses `5000`, `5k`, `2.5k`, `0.5`: requests per second, above 0 and at most 10 million.
pub fn parse_rate(text: &str) -> Result<f64, PlanError> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1e3),
        None => (t, 1.0),
    };
    number
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|r| r.is_finite() && *r > 0.0 && *r <= 10_000_000.0)
        .ok_or_else(|| PlanError::Rate(text.to_string()))
}

/// Writes a duration as whole microseconds (a plan's `*_us` fields).
pub(crate) fn duration_us<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_micros() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_accept_a_k_suffix() {
        assert_eq!(parse_rate("5000").unwrap(), 5000.0);
        assert_eq!(parse_rate("5k").unwrap(), 5000.0);
        assert_eq!(parse_rate("2.5k").unwrap(), 2500.0);
        for bad in ["5kx", "0", "-1", "fast", ""] {
            let err = parse_rate(bad).unwrap_err().to_string();
            assert!(err.contains("like 5000 or 5k"), "{err}");
        }
    }
}
