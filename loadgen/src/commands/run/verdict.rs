//! The exit code a `loadgen run` earns: 1 when the run is invalid or a threshold failed, 130
//! when a run with a planned end was interrupted.

use crate::engine::run::{stop_requested, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use crate::generator::plan::Plan;
use crate::results::run::RunResult;

/// The exit code of `result` under `plan`; says why on stderr.
pub(super) fn judge(result: &RunResult, plan: &Plan) -> u8 {
    let mut code = if result.valid { EXIT_OK } else { EXIT_FAILED };
    let planned = plan.duration.is_some() || plan.requests.is_some();
    if planned && (stop_requested() || result.runs.iter().any(|r| r.interrupted)) {
        gatebench_shared::say!(
            "loadgen: interrupted: the result holds what ran before the signal, marked \
             \"interrupted\"; requests still in flight after the grace are counted as cancelled"
        );
        return EXIT_INTERRUPTED;
    }
    for run in &result.runs {
        if let Some(max) = plan.max_error_rate {
            let rate = 1.0 - run.success_rate;
            if rate > max {
                gatebench_shared::say!(
                    "loadgen: {}: error rate {:.4} is over --max-error-rate {max}",
                    run.target.url,
                    rate
                );
                code = EXIT_FAILED;
            }
        }
        if let (Some(max), Some(s)) = (plan.max_p99, run.metrics.get("response_time")) {
            if s.p99 as u128 > max.as_micros() {
                gatebench_shared::say!(
                    "loadgen: {}: response-time p99 {} us is over --max-p99 {} us",
                    run.target.url,
                    s.p99,
                    max.as_micros()
                );
                code = EXIT_FAILED;
            }
        }
    }
    code
}
