//! A `loadgen behaviour` checked into its plan before anything is sent: the scenario, the
//! gateways, the mocks behind them, the load and the window, and what each scenario needs.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::engine::steering::Upstream;
use crate::model::target::Target;
use crate::options::BehaviourArgs;
use crate::wire::target::{parse_target, request_spec, RequestSpec};
use crate::wire::transport::Transport;

/// What a behaviour measurement puts together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Failover,
    Retries,
    Cache,
    Limits,
    Balance,
}

impl Scenario {
    pub fn parse(text: &str) -> Result<Scenario, String> {
        Ok(match text {
            "failover" => Scenario::Failover,
            "retries" => Scenario::Retries,
            "cache" => Scenario::Cache,
            "limits" => Scenario::Limits,
            "balance" => Scenario::Balance,
            other => {
                return Err(format!(
                    "unknown scenario {other:?}: failover, retries, cache, limits or balance"
                ))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Failover => "failover",
            Scenario::Retries => "retries",
            Scenario::Cache => "cache",
            Scenario::Limits => "limits",
            Scenario::Balance => "balance",
        }
    }
}

/// What the first upstream does in its window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// An error status (500, 502, 503, 429).
    Status(u16),
    /// Its listener closed: connections refused.
    Refuse,
    /// Answers after [`STALL`].
    Stall,
    /// Streams broken after 5 events.
    Cut,
}

/// How long a stalled upstream takes to answer.
pub const STALL: &str = "10s";

impl Fault {
    pub fn parse(text: &str) -> Result<Fault, String> {
        Ok(match text {
            "refuse" => Fault::Refuse,
            "stall" => Fault::Stall,
            "cut" => Fault::Cut,
            code => match code.parse::<u16>() {
                Ok(c @ (429 | 500 | 502 | 503 | 504 | 529)) => Fault::Status(c),
                _ => {
                    return Err(format!(
                        "--fault {text:?}: 429, 500, 502, 503, 504, 529, refuse, stall or cut"
                    ))
                }
            },
        })
    }

    pub fn name(&self) -> String {
        match self {
            Fault::Status(c) => c.to_string(),
            Fault::Refuse => "refuse".into(),
            Fault::Stall => "stall".into(),
            Fault::Cut => "cut".into(),
        }
    }
}

/// Where each request's mark goes: always the `x-gatebench-seq` header, and the body's `user`
/// field (Anthropic's `metadata.user_id`) unless the scenario is about repeated bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marks {
    pub body: bool,
}

impl Marks {
    fn parse(text: &str) -> Result<Marks, String> {
        Ok(match text {
            "both" => Marks { body: true },
            "header" => Marks { body: false },
            other => return Err(format!("--mark {other:?}: both or header")),
        })
    }

    pub fn name(self) -> &'static str {
        if self.body {
            "both"
        } else {
            "header"
        }
    }
}

/// A validated `loadgen behaviour`.
#[derive(Debug)]
pub struct BehaviourPlan {
    pub args: BehaviourArgs,
    pub scenario: Scenario,
    pub gateways: Vec<(String, Target)>,
    pub upstreams: Vec<Upstream>,
    pub rate: f64,
    pub trials: usize,
    pub fault: Fault,
    pub before: Duration,
    pub window: Duration,
    pub after: Duration,
    pub gap: Duration,
    pub settle: Duration,
    pub marks: Marks,
    pub distinct: usize,
    pub keys: usize,
    /// Per key, requests a second.
    pub limit_per_s: Option<f64>,
    pub weights: BTreeMap<String, f64>,
    pub slow: Duration,
    pub spec: RequestSpec,
    pub transport: Transport,
    pub timeout: Duration,
    pub seed: u64,
    /// The core loadgen runs on (`--cores`, its first core).
    pub core: Option<usize>,
}

/// Longest a trial may be, and most trials: a bound on what one command holds in memory.
const MAX_TRIAL: Duration = Duration::from_secs(3_600);
const MAX_TRIALS: usize = 100;

fn duration(flag: &str, text: Option<&str>, default: &str) -> Result<Duration, String> {
    let text = text.unwrap_or(default);
    gatebench_shared::duration::parse_us(text)
        .map(Duration::from_micros)
        .filter(|d| *d <= MAX_TRIAL)
        .ok_or_else(|| format!("--{flag} {text:?}: a duration like {default}, an hour at most"))
}

/// `60/min`, `2/s` or a bare number a minute, as requests a second.
pub fn parse_limit(text: &str) -> Result<f64, String> {
    let bad = || format!("--limit {text:?}: requests per key like 60/min or 2/s");
    let (count, per) = text.split_once('/').unwrap_or((text, "min"));
    let count: f64 = count.trim().parse().map_err(|_| bad())?;
    let seconds = match per.trim() {
        "s" | "sec" | "second" => 1.0,
        "m" | "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        _ => return Err(bad()),
    };
    if !(count > 0.0 && count.is_finite()) {
        return Err(bad());
    }
    Ok(count / seconds)
}

fn parse_weights(text: &str, upstreams: &[Upstream]) -> Result<BTreeMap<String, f64>, String> {
    let mut weights = BTreeMap::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let bad = || format!("--weights {part:?}: NAME=WEIGHT, like a=3,b=1");
        let (name, w) = part.split_once('=').ok_or_else(bad)?;
        let w: f64 = w.trim().parse().map_err(|_| bad())?;
        if !(w >= 0.0 && w.is_finite()) {
            return Err(bad());
        }
        let name = name.trim();
        if !upstreams.iter().any(|u| u.name == name) {
            return Err(format!("--weights names {name:?}, which is no --upstream"));
        }
        weights.insert(name.to_string(), w);
    }
    Ok(weights)
}

impl BehaviourPlan {
    /// Checks `args` without sending anything.
    pub fn new(args: BehaviourArgs) -> Result<BehaviourPlan, String> {
        let scenario = Scenario::parse(&args.behaviour)?;
        if args.gateways.is_empty() {
            return Err("behaviour needs a --gateway NAME=URL to measure".into());
        }
        let gateways = args
            .gateways
            .iter()
            .map(|g| {
                let (name, url) = g
                    .split_once('=')
                    .filter(|(n, u)| !n.is_empty() && !u.is_empty())
                    .ok_or_else(|| format!("--gateway {g:?}: expected NAME=URL"))?;
                let target = parse_target(url).map_err(|e| format!("--gateway {name}: {e}"))?;
                Ok((name.to_string(), target))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let upstreams = args
            .upstreams
            .iter()
            .map(|u| Upstream::parse(u))
            .collect::<Result<Vec<_>, _>>()?;
        let least = match scenario {
            Scenario::Failover | Scenario::Balance => 2,
            _ => 1,
        };
        if upstreams.len() < least {
            return Err(format!(
                "{} needs {least} --upstream NAME=URL (mocks' control listeners) or more",
                scenario.name()
            ));
        }
        let limit_per_s = args.limit.as_deref().map(parse_limit).transpose()?;
        let keys = args.keys.unwrap_or(4);
        // Limits: twice the limit over all keys, unless told.
        let rate = match (args.rate, scenario, limit_per_s) {
            (Some(rate), _, _) => rate,
            (None, Scenario::Limits, Some(limit)) => 2.0 * limit * keys as f64,
            _ => 100.0,
        };
        if !(rate > 0.0 && rate <= 10_000.0) {
            return Err(format!(
                "--rate {rate}: between 0 and 10000 requests a second"
            ));
        }
        let trials = args.trials.unwrap_or(3);
        if trials == 0 || trials > MAX_TRIALS {
            return Err(format!("--trials {trials}: from 1 to {MAX_TRIALS}"));
        }
        let default_fault = if scenario == Scenario::Retries {
            "429"
        } else {
            "503"
        };
        let fault = Fault::parse(args.fault.as_deref().unwrap_or(default_fault))?;
        let default_window = if scenario == Scenario::Balance {
            "4s"
        } else {
            "3s"
        };
        let default_mark = if scenario == Scenario::Cache {
            "header"
        } else {
            "both"
        };
        let marks = Marks::parse(args.mark.as_deref().unwrap_or(default_mark))?;
        if scenario == Scenario::Limits && limit_per_s.is_none() {
            return Err("limits needs --limit, the limit the gateway is configured with per key (like 60/min)".into());
        }
        let distinct = args.distinct.unwrap_or(10);
        if keys == 0 || distinct == 0 {
            return Err("--keys and --distinct: at least 1".into());
        }
        let mut weights = parse_weights(args.weights.as_deref().unwrap_or(""), &upstreams)?;
        if scenario == Scenario::Balance {
            for u in &upstreams {
                weights.entry(u.name.clone()).or_insert(1.0);
            }
        }
        let r = &args.request;
        let urls: Vec<&str> = gateways.iter().map(|(_, t)| t.url.as_str()).collect();
        let spec = request_spec(
            r.scenario.as_deref(),
            r.body.as_deref(),
            &r.headers,
            r.model.as_deref().unwrap_or("gpt-4o-mini"),
            r.max_tokens.unwrap_or(16),
            &urls,
        )
        .map_err(|e| e.to_string())?;
        if fault == Fault::Cut && !spec.stream {
            return Err("--fault cut breaks streams: use --scenario chat-stream".into());
        }
        // The bodies each trial will send, checked before any is sent.
        if scenario == Scenario::Cache {
            super::bodies::prompt_body(&spec, 0, "check")?;
        }
        if marks.body {
            for (_, target) in &gateways {
                super::bodies::marked_body(&spec.body, target.path.ends_with("/messages"))?;
            }
        }
        let plan = BehaviourPlan {
            scenario,
            rate,
            trials,
            fault,
            before: duration("before", args.before.as_deref(), "2s")?,
            window: duration("window", args.window.as_deref(), default_window)?,
            after: duration("after", args.after.as_deref(), "4s")?,
            gap: duration("gap", args.gap.as_deref(), "500ms")?,
            settle: duration("settle", args.settle.as_deref(), "1s")?,
            slow: duration("slow", args.slow.as_deref(), "200ms")?,
            timeout: duration("timeout", r.timeout.as_deref(), "30s")?,
            seed: r.seed.unwrap_or(0),
            core: match &r.cores {
                Some(text) => {
                    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                    let pinned =
                        gatebench_shared::host::parse_cores(text, cores).ok_or_else(|| {
                            format!("--cores {text:?}: cores of 0..{cores}, like 1 or 0-1")
                        })?;
                    pinned.first().copied()
                }
                None => None,
            },
            marks,
            distinct,
            keys,
            limit_per_s,
            weights,
            spec,
            transport: Transport::new(false, None, false, Vec::new()),
            gateways,
            upstreams,
            args,
        };
        if plan.before + plan.window + plan.after > MAX_TRIAL {
            return Err("--before, --window and --after: an hour at most in all".into());
        }
        Ok(plan)
    }

    /// Requests in one trial.
    pub fn count(&self) -> u64 {
        let seconds = (self.before + self.window + self.after).as_secs_f64();
        (seconds * self.rate).round().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(scenario: &str) -> BehaviourArgs {
        BehaviourArgs {
            behaviour: scenario.into(),
            gateways: vec!["g=http://127.0.0.1:9/v1/chat/completions".into()],
            upstreams: vec![
                "a=http://127.0.0.1:10".into(),
                "b=http://127.0.0.1:11".into(),
            ],
            ..BehaviourArgs::default()
        }
    }

    #[test]
    fn plans_take_their_defaults_and_refuse_what_does_not_go() {
        let p = BehaviourPlan::new(args("failover")).unwrap();
        assert_eq!(p.fault, Fault::Status(503));
        assert_eq!((p.rate, p.trials), (100.0, 3));
        assert_eq!(p.count(), 900);
        assert_eq!(p.marks.name(), "both");
        assert_eq!(
            BehaviourPlan::new(args("retries")).unwrap().fault,
            Fault::Status(429)
        );
        assert_eq!(
            BehaviourPlan::new(args("cache")).unwrap().marks.name(),
            "header"
        );
        let e = BehaviourPlan::new(args("limits")).unwrap_err();
        assert!(e.contains("--limit"), "{e}");
        assert!(BehaviourPlan::new(args("flood"))
            .unwrap_err()
            .contains("unknown scenario"));
        let mut one = args("failover");
        one.upstreams.truncate(1);
        assert!(BehaviourPlan::new(one).unwrap_err().contains("needs 2"));
        let mut bad = args("balance");
        bad.weights = Some("c=2".into());
        assert!(BehaviourPlan::new(bad)
            .unwrap_err()
            .contains("no --upstream"));
        let mut cut = args("failover");
        cut.fault = Some("cut".into());
        assert!(BehaviourPlan::new(cut).unwrap_err().contains("chat-stream"));
        let mut far = args("failover");
        far.upstreams[0] = "a=http://10.1.2.3:9".into();
        assert!(BehaviourPlan::new(far).unwrap_err().contains("loopback"));
    }

    #[test]
    fn limits_read_per_minute_or_second() {
        assert_eq!(parse_limit("60/min").unwrap(), 1.0);
        assert_eq!(parse_limit("2/s").unwrap(), 2.0);
        assert_eq!(parse_limit("120").unwrap(), 2.0);
        assert!(parse_limit("0/s").is_err() && parse_limit("5/day").is_err());
    }
}
