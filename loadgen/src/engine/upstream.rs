//! Did the upstream see exactly the requests that were sent? With `--upstream-metrics URL` (a
//! gatebench mock's `/metrics`), loadgen reads the mock's request counters before and after each
//! run and reports the difference beside the number it sent: a gateway that retries, caches,
//! hedges or drops requests shows up as a mismatch.

use crate::model::target::Target;
use crate::wire::get::get;

/// The mock's API requests so far, from its `/metrics`; `None` when it cannot be read.
pub fn requests_seen(metrics: &Target) -> Option<u64> {
    let text = get(metrics, &metrics.path)?;
    let mut total = 0;
    let mut found = false;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("mock_requests_total{route=\"") else {
            continue;
        };
        let Some((route, value)) = rest.split_once("\"} ") else {
            continue;
        };
        found = true;
        if matches!(route, "metrics" | "health" | "other") {
            continue;
        }
        total += value.trim().parse::<u64>().ok()?;
    }
    found.then_some(total)
}

#[cfg(test)]
mod tests {
    #[test]
    fn api_routes_are_summed_and_the_rest_left_out() {
        let text = "# HELP x\nmock_requests_total{route=\"chat\"} 10\n\
                    mock_requests_total{route=\"chat_stream\"} 5\n\
                    mock_requests_total{route=\"metrics\"} 3\nmock_faults_total{status=\"429\"} 1\n";
        let mut total = 0;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("mock_requests_total{route=\"") {
                let (route, value) = rest.split_once("\"} ").unwrap();
                if route != "metrics" {
                    total += value.parse::<u64>().unwrap();
                }
            }
        }
        assert_eq!(total, 15);
    }
}
