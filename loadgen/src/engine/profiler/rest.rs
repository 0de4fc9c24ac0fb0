//! Memory at rest: a process tree's resident memory sampled while no load runs, and what its
//! samples across trials say of growth.

use std::time::Duration;

use crate::results::memory::{Growth, RestMemory, TrialMemory, GROWTH_FLOOR_BYTES};

/// Time between two samples at rest.
const EVERY: Duration = Duration::from_millis(100);

/// Resident bytes of `pids` now (`VmRSS`, summed); `None` when none is running.
pub fn rss_bytes(pids: &[u32]) -> Option<u64> {
    let mut total = 0;
    let mut any = false;
    for pid in pids {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        if let Some(kib) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            total += kib * 1024;
            any = true;
        }
    }
    any.then_some(total)
}

/// Samples `pids` at rest for `span` (at least one sample).
pub fn sample(pids: &[u32], span: Duration) -> Option<RestMemory> {
    let until = std::time::Instant::now() + span;
    let mut samples = Vec::new();
    loop {
        if let Some(rss) = rss_bytes(pids) {
            samples.push(rss);
        }
        if std::time::Instant::now() + EVERY > until || crate::engine::run::stop_requested() {
            break;
        }
        std::thread::sleep(EVERY);
    }
    of(&mut samples)
}

fn of(samples: &mut [u64]) -> Option<RestMemory> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    Some(RestMemory {
        samples: samples.len(),
        median_rss_bytes: samples[samples.len() / 2],
        min_rss_bytes: samples[0],
        max_rss_bytes: samples[samples.len() - 1],
    })
}

/// Growth at rest over `trials`, `served` the requests the gateway answered between the first
/// probed run's rest and the last's. The first trial's growth (from before any load, or before
/// its probed run when that was not sampled) is the gateway warming and is reported apart; from
/// then on, memory at rest after one probed run against after the next, flagged when any step
/// exceeds the noise: the widest spread of any sampling at rest, and never under
/// [`GROWTH_FLOOR_BYTES`].
pub fn growth(
    before_load: Option<RestMemory>,
    trials: &[TrialMemory],
    served: u64,
) -> Option<Growth> {
    let before = before_load.or(trials.first()?.rest_before)?;
    let afters: Vec<RestMemory> = trials.iter().filter_map(|t| t.rest_after).collect();
    let after_first = *afters.first()?;
    let noise = trials
        .iter()
        .flat_map(|t| [t.rest_before, t.rest_after])
        .chain([before_load])
        .flatten()
        .map(|r| r.max_rss_bytes - r.min_rss_bytes)
        .max()
        .unwrap_or(0)
        .max(GROWTH_FLOOR_BYTES);
    let median = |r: &RestMemory| r.median_rss_bytes as i64;
    let flagged = afters
        .windows(2)
        .any(|w| median(&w[1]) - median(&w[0]) > noise as i64);
    let rest_growth_bytes = median(&afters[afters.len() - 1]) - median(&after_first);
    Some(Growth {
        rest_growth_bytes,
        first_trial_growth_bytes: median(&after_first) - median(&before),
        noise_bytes: noise,
        flagged,
        bytes_per_request: if served == 0 {
            0.0
        } else {
            rest_growth_bytes as f64 / served as f64
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rest(median: u64, spread: u64) -> Option<RestMemory> {
        Some(RestMemory {
            samples: 10,
            median_rss_bytes: median,
            min_rss_bytes: median - spread / 2,
            max_rss_bytes: median + spread / 2,
        })
    }

    fn trial(before: u64, after: u64) -> TrialMemory {
        TrialMemory {
            requests: 1000,
            rest_before: rest(before, 1000),
            rest_after: rest(after, 1000),
            ..Default::default()
        }
    }

    #[test]
    fn memory_that_stays_within_its_spread_is_not_flagged() {
        let g = growth(
            None,
            &[trial(100_000, 900_000), trial(900_000, 900_400)],
            2000,
        )
        .unwrap();
        assert!(!g.flagged, "a first trial's warming is not growth: {g:?}");
        assert_eq!(
            (g.first_trial_growth_bytes, g.rest_growth_bytes),
            (800_000, 400)
        );
        assert_eq!(
            g.noise_bytes, GROWTH_FLOOR_BYTES,
            "a spread of 1 KB is under the floor"
        );
    }

    #[test]
    fn memory_that_grows_past_its_spread_is_flagged_with_the_growth_per_request() {
        let trials = [
            trial(100_000, 150_000),
            trial(150_000, 250_000),
            trial(250_000, 350_000),
        ];
        let g = growth(None, &trials, 2000).unwrap();
        assert!(g.flagged, "{g:?}");
        assert_eq!(g.rest_growth_bytes, 200_000);
        assert_eq!(
            g.bytes_per_request, 100.0,
            "over the 2,000 requests after the first trial"
        );
    }

    #[test]
    fn this_process_has_a_resident_size() {
        let r = sample(&[std::process::id()], Duration::from_millis(250)).unwrap();
        assert!(r.samples >= 2 && r.median_rss_bytes > 1_000_000, "{r:?}");
    }
}
