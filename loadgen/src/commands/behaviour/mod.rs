//! `loadgen behaviour SCENARIO`: what a gateway does with traffic when its upstreams fail,
//! throttle, repeat or differ (failover, retries, cache, limits, balance). The upstreams are
//! gatebench mocks reached through their control listeners: the first is steered for a window
//! (the mock times it), every request carries a mark (`x-gatebench-seq`, and the body's `user`
//! where the scenario allows), and each request is joined with what every upstream recorded of
//! it. Each figure is a mean over trials with its interval; every mock is reset on every exit
//! path.

mod across;
mod balance;
mod bodies;
mod cache;
mod common;
mod failover;
mod join;
mod limits;
mod plan;
mod requests;
mod retries;
#[cfg(test)]
mod simulated;
mod trial;

use std::collections::BTreeMap;

use self::common::{trial_record, Figures};
use self::join::Joined;
use self::plan::{BehaviourPlan, Scenario};
use self::requests::{key_name, Requests};
use super::command::table;
use super::{written, Command};
use crate::engine::run::{stop_requested, EXIT_FAILED, EXIT_OK};
use crate::engine::steering::Steered;
use crate::model::target::Target;
use crate::options::BehaviourArgs;
use crate::results::behaviour::{
    BehaviourResult, GatewayBehaviour, KeyShare, Refusal, Settings, UpstreamShare, SCHEMA,
};

/// Requests of one trial are numbered apart from every other's by this much.
const SEQ_SPAN: u64 = 10_000_000_000;
/// Past this schedule lag (p99, ms) a trial measured loadgen, not the gateway.
const MAX_LAG_MS: f64 = 5.0;

/// The p99 of how late the requests of a trial were sent, ms.
fn lag_p99_ms(observed: &trial::Observed) -> f64 {
    let mut lags: Vec<f64> = observed
        .sent
        .iter()
        .map(|s| s.lag_ns as f64 / 1e6)
        .collect();
    common::quantile(&mut lags, 0.99).unwrap_or(0.0)
}

impl Command for BehaviourArgs {
    type Plan = BehaviourPlan;

    fn plan(self) -> anyhow::Result<BehaviourPlan> {
        BehaviourPlan::new(self).map_err(anyhow::Error::msg)
    }

    fn execute(plan: BehaviourPlan, command_line: Vec<String>) -> anyhow::Result<u8> {
        let (result, code) = execute(&plan, command_line)?;
        let report = crate::report::behaviour::terminal(&result);
        written(&result, plan.args.out.as_deref(), &report, code)
    }

    fn preset(plan: &BehaviourPlan) -> anyhow::Result<toml::Table> {
        Ok(table(&plan.args))
    }

    fn describe(plan: &BehaviourPlan) -> String {
        format!(
            "behaviour {}: {} gateway(s), {} upstream(s), {} trial(s) of {} requests",
            plan.scenario.name(),
            plan.gateways.len(),
            plan.upstreams.len(),
            plan.trials,
            plan.count()
        )
    }
}

/// What one gateway's trials gave, before they are combined.
#[derive(Default)]
struct Gathered {
    figures: Vec<Figures>,
    why_none: BTreeMap<String, String>,
    notes: Vec<String>,
    trials: Vec<crate::results::behaviour::Trial>,
    keys: Vec<limits::KeyCounts>,
    shares: Vec<(f64, f64, usize)>,
    by_marks: bool,
    dropped: u64,
}

impl Gathered {
    fn note(&mut self, notes: Vec<String>) {
        for n in notes {
            if let Some((name, why)) = n.split_once(": ") {
                self.why_none.insert(name.to_string(), why.to_string());
            }
            if !self.notes.contains(&n) {
                self.notes.push(n);
            }
        }
    }
}

/// Runs `loadgen behaviour` and returns the result with the exit code it earns.
pub fn run_behaviour(
    args: BehaviourArgs,
    command: Vec<String>,
) -> anyhow::Result<(BehaviourResult, u8)> {
    let plan = BehaviourPlan::new(args).map_err(anyhow::Error::msg)?;
    execute(&plan, command)
}

/// Runs every gateway's trials; the result and the exit code it earns.
fn execute(plan: &BehaviourPlan, command: Vec<String>) -> anyhow::Result<(BehaviourResult, u8)> {
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    // Ctrl-C stops the load; the mocks are reset on the way out.
    let _ = crate::engine::run::stop_flag();
    if let Some(core) = plan.core {
        core_affinity::set_for_current(core_affinity::CoreId { id: core });
    }
    let steered = Steered::take(&plan.upstreams).map_err(anyhow::Error::msg)?;
    let names: Vec<String> = plan.upstreams.iter().map(|u| u.name.clone()).collect();
    // Names this run's prompts and keys apart from any earlier run's.
    let run = format!("{:x}", gatebench_shared::clock::monotonic_ns() ^ plan.seed);
    let mut gateways = Vec::new();
    let mut reasons = Vec::new();
    let mut problems = std::collections::BTreeSet::new();
    for (g, (name, target)) in plan.gateways.iter().enumerate() {
        let mut gathered = Gathered {
            by_marks: true,
            ..Gathered::default()
        };
        let mut refusal = None;
        for t in 0..plan.trials {
            if g + t > 0 {
                crate::engine::comparison::pause(plan.settle);
            }
            if stop_requested() {
                break;
            }
            if !plan.args.quiet {
                gatebench_shared::say!(
                    "loadgen behaviour {}: {name}, trial {} of {}",
                    plan.scenario.name(),
                    t + 1,
                    plan.trials
                );
            }
            let first_seq = 1 + (g * 1_000 + t) as u64 * SEQ_SPAN;
            let set = format!("{run}-{g}-{t}");
            let requests = Requests::build(plan, target, &set).map_err(anyhow::Error::msg)?;
            let observed =
                trial::run_trial(plan, target, &requests, first_seq).map_err(anyhow::Error::msg)?;
            if plan.scenario == Scenario::Limits && refusal.is_none() {
                refusal = probe_refusal(plan, target, &key_name(&set, 0));
            }
            let joined = Joined::of(&observed);
            if observed.arrivals.iter().all(Vec::is_empty) && plan.scenario != Scenario::Limits {
                problems.insert(format!(
                    "{name}: no request reached any upstream in a trial: is the gateway in front of \
                     the mocks given as --upstream?"
                ));
            }
            let lag = lag_p99_ms(&observed);
            if lag > MAX_LAG_MS {
                problems.insert(format!(
                    "{name}: loadgen sent late (p99 {lag:.1} ms after the intended time, more \
                     than {MAX_LAG_MS} ms): the timings are loadgen's, not the gateway's"
                ));
            }
            gathered.by_marks &= joined.by_marks();
            gathered.dropped += observed.dropped;
            let figures = scenario_figures(plan, &observed, &joined, &names, &mut gathered);
            gathered
                .trials
                .push(trial_record(&observed, &joined, &names, figures.clone()));
            gathered.figures.push(figures);
        }
        reasons.extend(std::mem::take(&mut problems));
        if gathered.dropped > 0 {
            reasons.push(format!(
                "{name}: {} arrivals fell out of a mock's record before they were read (start \
                 the mocks with a larger --record)",
                gathered.dropped
            ));
        }
        gateways.push(behaviour_of(plan, name, target, gathered, &names, refusal));
    }
    let problems = steered.release();
    reasons.extend(
        problems
            .into_iter()
            .map(|p| format!("could not reset a mock: {p}")),
    );
    let interrupted = stop_requested();
    if interrupted {
        reasons.push("interrupted before every trial ran".into());
    }
    let valid = reasons.is_empty();
    let result = BehaviourResult {
        envelope: crate::results::envelope::Envelope::new(SCHEMA, command, started_at, None),
        scenario: plan.scenario.name().into(),
        settings: settings(plan),
        upstreams: names,
        gateways,
        valid,
        invalid_reasons: reasons,
        interrupted,
    };
    Ok((result, if valid { EXIT_OK } else { EXIT_FAILED }))
}

fn scenario_figures(
    plan: &BehaviourPlan,
    observed: &trial::Observed,
    joined: &Joined,
    names: &[String],
    gathered: &mut Gathered,
) -> Figures {
    let (figures, notes) = match plan.scenario {
        Scenario::Failover => failover::figures(plan, observed, joined),
        Scenario::Retries => retries::figures(observed, joined),
        Scenario::Cache => cache::figures(observed, joined, plan.distinct),
        Scenario::Limits => {
            let seconds = plan.count() as f64 / plan.rate;
            let limit = plan.limit_per_s.unwrap_or(f64::INFINITY);
            let (f, notes, counts) = limits::figures(observed, joined, plan.keys, limit, seconds);
            if gathered.keys.is_empty() {
                gathered.keys = vec![limits::KeyCounts::default(); counts.len()];
            }
            for (sum, c) in gathered.keys.iter_mut().zip(counts) {
                sum.sent += c.sent;
                sum.accepted += c.accepted;
                sum.refused += c.refused;
                sum.refused_reached_upstream += c.refused_reached_upstream;
            }
            (f, notes)
        }
        Scenario::Balance => {
            let (f, notes, shares) = balance::figures(observed, names, &plan.weights);
            if gathered.shares.is_empty() {
                gathered.shares = vec![(0.0, 0.0, 0); shares.len()];
            }
            for (sum, (b, d)) in gathered.shares.iter_mut().zip(shares) {
                *sum = (sum.0 + b, sum.1 + d, sum.2 + 1);
            }
            (f, notes)
        }
    };
    gathered.note(notes);
    figures
}

fn behaviour_of(
    plan: &BehaviourPlan,
    name: &str,
    target: &Target,
    gathered: Gathered,
    names: &[String],
    refusal: Option<Refusal>,
) -> GatewayBehaviour {
    let trials_run = gathered.trials.len().max(1) as f64;
    let seconds = plan.count() as f64 / plan.rate * trials_run;
    let keys = gathered
        .keys
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let accepted_per_s = c.accepted as f64 / seconds;
            KeyShare {
                key: format!("key {k}"),
                sent_per_s: c.sent as f64 / seconds,
                accepted_per_s,
                of_limit: accepted_per_s / plan.limit_per_s.unwrap_or(f64::INFINITY),
                refused_reached_upstream: c.refused_reached_upstream,
            }
        })
        .collect();
    let total_weight: f64 = plan.weights.values().sum();
    let shares = gathered
        .shares
        .iter()
        .zip(names)
        .map(|(&(b, d, n), upstream)| {
            let weight = plan.weights.get(upstream).copied().unwrap_or(1.0);
            UpstreamShare {
                upstream: upstream.clone(),
                weight,
                expected: weight / total_weight.max(f64::MIN_POSITIVE),
                before: b / n.max(1) as f64,
                during: d / n.max(1) as f64,
            }
        })
        .collect();
    let mut notes = gathered.notes;
    if !gathered.by_marks {
        notes.push(
            "the gateway passed no mark on (neither x-gatebench-seq nor the body's user): \
             figures come from the upstreams' counts over time"
                .into(),
        );
    }
    GatewayBehaviour {
        name: name.into(),
        url: target.url.clone(),
        source: if gathered.by_marks { "marks" } else { "counts" }.into(),
        figures: across::combine(&gathered.figures, &gathered.why_none),
        notes,
        keys,
        shares,
        refusal,
        trials: gathered.trials,
    }
}

/// What a refusal looks like: requests with the trial's first key right after its load, until
/// one is refused (20 at most).
fn probe_refusal(plan: &BehaviourPlan, target: &Target, key: &str) -> Option<Refusal> {
    let mut headers: Vec<(String, String)> = plan
        .spec
        .headers
        .iter()
        .filter(|(n, _)| n.as_str() != "authorization" && n.as_str() != "x-api-key")
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    headers.push(("authorization".into(), format!("Bearer {key}")));
    headers.push(("x-api-key".into(), key.to_string()));
    for _ in 0..20 {
        let answer = crate::wire::plain::call(
            target,
            "POST",
            &target.path,
            &headers,
            &plan.spec.body,
            plan.timeout,
            64 * 1024,
        )
        .ok()?;
        if answer.status != 200 {
            let kept = answer
                .headers
                .iter()
                .filter(|(n, _)| {
                    n.starts_with("retry-after") || n.contains("ratelimit") || n == "content-type"
                })
                .cloned()
                .collect();
            return Some(Refusal {
                status: answer.status,
                headers: kept,
                body: answer.text().chars().take(500).collect(),
            });
        }
    }
    None
}

fn settings(plan: &BehaviourPlan) -> Settings {
    Settings {
        rate: plan.rate,
        trials: plan.trials,
        fault: plan.fault.name(),
        before_ms: plan.before.as_millis() as u64,
        window_ms: plan.window.as_millis() as u64,
        after_ms: plan.after.as_millis() as u64,
        gap_ms: plan.gap.as_millis() as u64,
        mark: plan.marks.name().into(),
        distinct: (plan.scenario == Scenario::Cache).then_some(plan.distinct),
        keys: (plan.scenario == Scenario::Limits).then_some(plan.keys),
        limit_per_s: plan.limit_per_s,
        weights: plan.weights.clone(),
        slow_ms: (plan.scenario == Scenario::Balance).then_some(plan.slow.as_secs_f64() * 1e3),
    }
}
