//! compare's verdicts on simulated time: the direct target, its twin and three gateways are
//! simulated targets of one seeded service-time spread, the gateways adding a known 2 ms, a known
//! 20 µs and nothing. The trials, the analysis and the verdicts are compare's own; only the
//! wire and the clock are the model's. Every seed is a different draw of every target's
//! service times, and every one must give the same verdicts.

use std::collections::BTreeMap;

use clap::Parser;
use gatebench_shared::sim::SimTime;

use super::ComparePlan;
use crate::commands::CommandArgs;
use crate::engine::comparison::{analyse, run_trials_on};
use crate::engine::run::simulated::run_simulated;
use crate::results::compare::PercentileDelta;
use crate::wire::simulated::{Service, SimulatedTarget};

/// Every target's own service time: uniform in 1.000-1.050 ms.
const LO_NS: u64 = 1_000_000;
const SPREAD_NS: u64 = 50_000;

fn compare_plan(seed: u64) -> ComparePlan {
    let url = |port: u16| format!("http://127.0.0.1:{port}/v1/chat/completions");
    let seed = seed.to_string();
    let line = [
        "loadgen".to_string(),
        "compare".into(),
        "--direct".into(),
        url(9),
        "--gateway".into(),
        format!("two-ms={}", url(10)),
        "--gateway".into(),
        format!("twenty-us={}", url(11)),
        "--gateway".into(),
        format!("same={}", url(12)),
        "--rate".into(),
        "100".into(),
        "--duration".into(),
        "1s".into(),
        "--trials".into(),
        "5".into(),
        "--poll-budget".into(),
        "0".into(),
        "--seed".into(),
        seed,
        "--quiet".into(),
    ];
    match crate::Cli::try_parse_from(line)
        .expect("the flags parse")
        .command
    {
        CommandArgs::Compare(mut args) => {
            args.load = crate::engine::run::simulated::own(args.load);
            ComparePlan::new(args).expect("a plan")
        }
        _ => unreachable!("a compare command line"),
    }
}

/// compare's deltas for one seed of every target's service times.
fn verdicts(seed: u64) -> Vec<PercentileDelta> {
    let cp = compare_plan(seed);
    let c = &cp.comparison;
    let time = SimTime::new(1_000_000_000);
    let models: BTreeMap<String, SimulatedTarget> = c
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let added = match t.name.to_string().as_str() {
                "two-ms" => 2_000_000,
                "twenty-us" => 20_000,
                _ => 0,
            };
            let service = Service::Uniform {
                lo_ns: LO_NS + added,
                hi_ns: LO_NS + added + SPREAD_NS,
            };
            let model = SimulatedTarget::new(&time, 4, service, seed * 31 + i as u64);
            (t.name.to_string(), model)
        })
        .collect();
    let mut run = |plan, t: &crate::model::target::Named, _: &mut dyn FnMut(_)| {
        run_simulated(plan, t.target.clone(), &time, &models[&t.name.to_string()])
    };
    // A settle between runs passes on the simulated clock.
    let mut pause = |d: std::time::Duration| {
        let at = time.now_ns() + d.as_nanos() as u64;
        crate::engine::run::simulated::block_on(&time, time.sleep_until(at));
    };
    let settle = (c.settle, &mut pause as &mut dyn FnMut(_));
    let runs = run_trials_on(
        &cp.plan,
        &c.targets,
        c.trials,
        settle,
        "",
        &mut run,
        &mut |_, _| {},
    );
    assert_eq!(runs.len(), c.targets.len() * c.trials);
    analyse(&c.targets, &runs, c.twin, c.min_effect_us).1
}

#[test]
fn a_known_2_ms_and_20_us_are_found_and_an_identical_target_is_within_for_100_seeds() {
    for seed in 0..100 {
        for d in verdicts(seed) {
            let verdict = d.verdict();
            let expected = match d.gateway.to_string().as_str() {
                "two-ms" | "twenty-us" => verdict == "adds latency",
                // Within the twin's resolution; or, where every trial of the twin gave
                // direct's figure to the microsecond (a resolution of 0), not distinguishable.
                "same" => {
                    verdict.starts_with("within the resolution")
                        || verdict == "not distinguishable from direct"
                }
                _ => verdict.starts_with("control"),
            };
            assert!(
                expected,
                "seed {seed}: {} at {}: {verdict} ({:?}, resolution {} us)",
                d.gateway, d.percentile, d.added_us, d.resolution_us
            );
        }
    }
}
