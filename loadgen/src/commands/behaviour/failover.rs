//! Failover: the first upstream fails for a window, the others stay healthy. From the
//! upstreams' own records: when the gateway stopped sending to the failing upstream after its
//! first failure (`switch_over_ms`: its last arrival before a quiet gap), when it came back
//! after the window (`return_ms`), what a failed-then-retried request cost against one that went
//! straight to a healthy upstream (`failover_penalty_ms`), the gap between attempts
//! (`retry_delay_ms`), and the client's error rate and latency before, in and after the window.

use gatebench_shared::stats::median;

use super::common::{amplification, error_rate, median_ms, retry_gaps_ms, Figures, Phase};
use super::join::{times_at, Attempt, Joined};
use super::plan::{BehaviourPlan, Fault};
use super::trial::Observed;

/// The failing upstream's index.
const FAILING: usize = 0;

/// The instant (ns) after which the failing upstream got nothing for at least `gap_ns`, from
/// its arrivals `times` (sorted) at or after `first` and before `until`; `None` when it never
/// went quiet that long within the window.
pub fn stopped_at(times: &[u64], first: u64, until: u64, gap_ns: u64) -> Option<u64> {
    let inside: Vec<u64> = times
        .iter()
        .copied()
        .filter(|&t| t >= first && t < until)
        .collect();
    if inside.is_empty() {
        return (until.saturating_sub(first) >= gap_ns).then_some(first);
    }
    for (i, &t) in inside.iter().enumerate() {
        let next = inside.get(i + 1).copied().unwrap_or(until);
        if next - t >= gap_ns {
            return Some(t);
        }
    }
    None
}

/// A trial's failover figures, and what a reader must know of them.
pub fn figures(
    plan: &BehaviourPlan,
    observed: &Observed,
    joined: &Joined,
) -> (Figures, Vec<String>) {
    let mut f = Figures::new();
    let mut notes = Vec::new();
    let window = observed.window;
    let phase = |p: Phase| {
        observed
            .sent
            .iter()
            .filter(move |s| Phase::of(s.due_ns, window) == p)
    };
    for p in [Phase::Before, Phase::Window, Phase::After] {
        f.insert(format!("error_rate_{}", p.name()), error_rate(phase(p)));
        f.insert(format!("p50_ms_{}", p.name()), median_ms(phase(p)));
    }
    if plan.fault == Fault::Refuse {
        // A refused connection reaches no record: what the upstreams saw is not what was tried.
        notes.push(
            "amplification: not observable when connections are refused (no refused attempt \
             reaches the upstream's record)"
                .into(),
        );
        f.insert("amplification".into(), None);
    } else {
        f.insert("amplification".into(), amplification(observed, joined));
    }
    let gaps = retry_gaps_ms(joined);
    if gaps.is_empty() {
        notes.push("retry_delay_ms: no request reached an upstream twice".into());
    }
    f.insert("retry_delay_ms".into(), median(&gaps));
    let Some((from, until)) = window else {
        return (f, notes);
    };
    let failing = times_at(observed, FAILING);
    // A stalled answer is a 200 that came late: every arrival in the window failed.
    let stall = plan.fault == Fault::Stall;
    let failed = |a: &Attempt| {
        a.failed() || (stall && a.upstream == FAILING && a.t_ns >= from && a.t_ns < until)
    };
    let failures: Vec<u64> = observed.arrivals[FAILING]
        .iter()
        .filter(|a| a.status >= 400 || a.cut || stall)
        .map(|a| a.t_ns)
        .collect();
    let gap_ns = plan.gap.as_nanos() as u64;
    // A refused connection never reaches the mock's record: the window's start is the first
    // failure, and the switch cannot be seen from the upstream.
    let first = match plan.fault {
        Fault::Refuse => Some(from),
        _ => failures
            .iter()
            .copied()
            .filter(|&t| t >= from && t < until)
            .min(),
    };
    let switch = match (&plan.fault, first) {
        (Fault::Refuse, _) => {
            notes.push(
                "switch_over_ms: not observable when connections are refused (no attempt \
                 reaches the upstream's record)"
                    .into(),
            );
            None
        }
        (_, None) => {
            notes.push(
                "switch_over_ms: the failing upstream failed no request in its window".into(),
            );
            None
        }
        (_, Some(first)) => match stopped_at(&failing, first, until, gap_ns) {
            Some(t) => Some((t - first) as f64 / 1e6),
            None => {
                notes.push("switch_over_ms: never within the window".into());
                None
            }
        },
    };
    f.insert("switch_over_ms".into(), switch);
    let back = failing.iter().copied().find(|&t| t >= until);
    if back.is_none() {
        notes.push("return_ms: never within the window after recovery".into());
    }
    f.insert("return_ms".into(), back.map(|t| (t - until) as f64 / 1e6));
    if joined.by_marks() {
        let (mut via_failure, mut straight) = (Vec::new(), Vec::new());
        for s in observed.sent.iter().filter(|s| s.error.is_none()) {
            match joined.of_request(s.seq) {
                [only] if only.upstream != FAILING && !failed(only) => {
                    straight.push(s.latency_ms())
                }
                [first, .., last]
                    if first.upstream == FAILING
                        && failed(first)
                        && last.upstream != FAILING
                        && !failed(last) =>
                {
                    via_failure.push(s.latency_ms())
                }
                _ => {}
            }
        }
        let penalty = median(&via_failure)
            .zip(median(&straight))
            .map(|(a, b)| a - b);
        f.insert("failover_penalty_ms".into(), penalty);
        f.insert(
            "failed_over_requests".into(),
            Some(via_failure.len() as f64),
        );
        if plan.fault == Fault::Cut {
            let cut: Vec<_> = observed
                .sent
                .iter()
                .filter(|s| joined.of_request(s.seq).iter().any(|a| a.cut))
                .collect();
            let broken = cut.iter().filter(|s| s.error.is_some()).count();
            f.insert("cut_streams".into(), Some(cut.len() as f64));
            f.insert(
                "cut_streams_failed_at_client".into(),
                (!cut.is_empty()).then(|| broken as f64 / cut.len() as f64),
            );
        }
    }
    (f, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_switch_is_the_last_arrival_before_a_quiet_gap() {
        // Failures at 0, 10, 20 ms, then nothing until the window ends at 2 s.
        let times = [0, 10 * MS, 20 * MS];
        assert_eq!(stopped_at(&times, 0, 2_000 * MS, 500 * MS), Some(20 * MS));
        // A probe every 600 ms after the switch does not move it.
        let probing = [0, 10 * MS, 620 * MS, 1_220 * MS];
        assert_eq!(stopped_at(&probing, 0, 2_000 * MS, 500 * MS), Some(10 * MS));
        // Every 100 ms to the end: never quiet for 500 ms.
        let busy: Vec<u64> = (0..20).map(|i| i * 100 * MS).collect();
        assert_eq!(stopped_at(&busy, 0, 2_000 * MS, 500 * MS), None);
        // Nothing at all in the window: stopped at once.
        assert_eq!(stopped_at(&[], 0, 2_000 * MS, 500 * MS), Some(0));
    }
}
