//! One judge of a difference against the setup's resolution: the resolution an A/A twin gives
//! (`resolution_of`), the p-value of "this figure differs" (`p_value`), and the verdict
//! (`judge`). `overhead` and `compare` (and every command built on it) judge through it.

use gatebench_shared::stats::Interval;
use gatebench_shared::trials::AcrossTrials;

/// The smallest difference resolved: the farthest end of the twin's interval from zero (the
/// A/A control's spread), at least `min_effect_us`. Shared by `overhead` and `compare`.
pub fn resolution_of(control: Option<&AcrossTrials>, min_effect_us: f64) -> f64 {
    control
        .map_or(0.0, |c| {
            let i = c.interval(0.95);
            i.low.abs().max(i.high.abs())
        })
        .max(min_effect_us)
}

/// The p-value of "`figure` differs": against the twin (`control`, Welch), unless it is within
/// `min_effect_us` of zero; without a twin, against ±`min_effect_us`. Shared by `overhead` and
/// `compare`.
pub fn p_value(figure: &AcrossTrials, control: Option<&AcrossTrials>, min_effect_us: f64) -> f64 {
    match control {
        Some(c) if figure.mean.abs() > min_effect_us => figure.p_value_against(c),
        Some(_) => 1.0,
        None => figure.p_value_beyond(min_effect_us),
    }
}

/// The verdict on a difference `added` (µs, across `trials`) whose test gave `p_adjusted`, at
/// a resolution of `resolution_us` (0: none measured or given); the twin's own row (`is_twin`)
/// is the control. Shared by `overhead` and `compare`.
pub fn judge(
    p_adjusted: f64,
    added: Interval,
    resolution_us: f64,
    trials: usize,
    is_twin: bool,
) -> String {
    let resolution = if resolution_us > 0.0 {
        format!(
            " (±{})",
            gatebench_shared::duration::human_resolution_us(resolution_us)
        )
    } else {
        String::new()
    };
    if is_twin {
        return format!("control: the resolution{resolution}");
    }
    let one_trial = if trials == 1 {
        "; one trial: variation between trials not measured"
    } else {
        ""
    };
    let found = p_adjusted < ALPHA;
    let call = match (found, added.estimate > 0.0) {
        (true, true) if added.low > resolution_us => "adds latency".to_string(),
        (true, false) if added.high < -resolution_us => "faster than direct".to_string(),
        // The interval alone lies beyond the resolution, but the test, adjusted for every row
        // of the table, is not significant: saying "within the resolution" would contradict
        // the interval printed beside it.
        (false, _) if added.low > resolution_us || added.high < -resolution_us => format!(
            "unresolved: its interval is beyond the resolution{resolution}, but not significant \
             once adjusted for the whole table; more trials decide"
        ),
        _ if resolution.is_empty() => "not distinguishable from direct".to_string(),
        _ => format!("within the resolution{resolution}"),
    };
    format!("{call}{one_trial}")
}

/// The family-wise error rate of the verdicts.
pub const ALPHA: f64 = 0.05;

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(estimate: f64, low: f64, high: f64) -> Interval {
        Interval {
            estimate,
            low,
            high,
            confidence: 0.95,
        }
    }

    #[test]
    fn an_interval_beyond_the_resolution_is_never_called_within_it() {
        let wide = interval(17_000.0, 1_800.0, 33_000.0);
        let verdict = judge(0.2, wide, 119.0, 3, false);
        assert!(verdict.starts_with("unresolved"), "{verdict}");
        assert_eq!(judge(0.001, wide, 119.0, 3, false), "adds latency");
        let across = interval(50.0, -30.0, 130.0);
        assert!(judge(0.2, across, 119.0, 3, false).starts_with("within the resolution"));
    }

    #[test]
    fn a_resolution_under_a_microsecond_keeps_its_tenths() {
        let small = interval(-0.2, -0.3, 0.1);
        assert_eq!(
            judge(0.5, small, 0.3, 5, false),
            "within the resolution (±0.3 µs)"
        );
        assert_eq!(
            judge(0.5, interval(1.0, -4.0, 6.0), 12.4, 5, false),
            "within the resolution (±12 µs)"
        );
    }
}
