//! A simulated gateway in front of simulated upstreams, for tests: what a trial would observe of a
//! gateway whose failover rules are known, computed rather than sent, so the figures behaviour
//! reads from an upstream's record can be checked against the rules that made it, exactly.

use clap::Parser;

use super::plan::BehaviourPlan;
use super::trial::Observed;
use crate::commands::CommandArgs;
use crate::engine::logged::Sent;
use crate::engine::steering::Arrival;

const MS: u64 = 1_000_000;

/// A gateway that sends every request to upstream 0 unless it has tripped; an error there is
/// retried on upstream 1 `retry_delay_ns` after it; `trip` errors in a row take upstream 0 out
/// for `cooldown_ns`, after which the next request tries it again, and one more error takes it
/// out again (a circuit breaker, half open). Each upstream answers in
/// `service_ns`; upstream 0 answers 503 to what arrives in the trial's window.
pub(super) struct ModelGateway {
    pub service_ns: u64,
    pub retry_delay_ns: u64,
    pub trip: u32,
    pub cooldown_ns: u64,
}

impl ModelGateway {
    /// What a trial of `plan` from `start_ns` would observe: the requests sent and each
    /// upstream's record.
    pub(super) fn observe(&self, plan: &BehaviourPlan, start_ns: u64) -> Observed {
        let from = start_ns + plan.before.as_nanos() as u64;
        let until = from + plan.window.as_nanos() as u64;
        let end_ns = until + plan.after.as_nanos() as u64;
        let gap_ns = (1e9 / plan.rate).round() as u64;
        let mut arrivals = vec![Vec::new(), Vec::new()];
        let mut sent = Vec::new();
        let (mut errors_in_row, mut out_until) = (0, 0);
        let mut arrive = |upstream: usize, t_ns: u64, seq: u64, status: u16| {
            let list: &mut Vec<Arrival> = &mut arrivals[upstream];
            list.push(Arrival {
                i: list.len() as u64,
                t_ns,
                seq: Some(seq),
                user: None,
                key: None,
                status,
                cut: false,
            });
        };
        for seq in 0.. {
            let due_ns = start_ns + seq * gap_ns;
            if due_ns >= end_ns {
                break;
            }
            let done_ns = if due_ns >= out_until {
                let failing = (from..until).contains(&due_ns);
                arrive(0, due_ns, seq, if failing { 503 } else { 200 });
                let answered = due_ns + self.service_ns;
                if failing {
                    errors_in_row += 1;
                    if errors_in_row >= self.trip {
                        // Half open when the cooldown ends: one more error trips it again.
                        (errors_in_row, out_until) = (self.trip - 1, answered + self.cooldown_ns);
                    }
                    let retry = answered + self.retry_delay_ns;
                    arrive(1, retry, seq, 200);
                    retry + self.service_ns
                } else {
                    errors_in_row = 0;
                    answered
                }
            } else {
                arrive(1, due_ns, seq, 200);
                due_ns + self.service_ns
            };
            sent.push(Sent {
                seq,
                template: 0,
                due_ns,
                lag_ns: 0,
                done_ns,
                error: None,
            });
        }
        Observed {
            sent,
            start_ns,
            end_ns,
            arrivals,
            window: Some((from, until)),
            dropped: 0,
        }
    }
}

/// The plan of `loadgen behaviour` with `flags`, one gateway and two upstreams on loopback.
pub(super) fn plan(flags: &[&str]) -> BehaviourPlan {
    let line = [
        "loadgen",
        "behaviour",
        "--gateway",
        "gw=http://127.0.0.1:9/v1/chat/completions",
        "--upstream",
        "a=http://127.0.0.1:10",
        "--upstream",
        "b=http://127.0.0.1:11",
    ];
    let parsed = crate::Cli::try_parse_from(line.iter().chain(flags)).expect("the flags parse");
    match parsed.command {
        CommandArgs::Behaviour(args) => BehaviourPlan::new(args).expect("a plan"),
        _ => unreachable!("a behaviour command line"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::failover::figures;
    use super::super::join::Joined;
    use super::*;

    #[test]
    fn failovers_switch_over_return_and_retry_delay_are_the_gateways_own_rules() {
        // 100 req/s, upstream a failing from 1 s to 2 s. Three errors in a row (the requests
        // at 1,000, 1,010 and 1,020 ms) trip a for 600 ms from the third's answer (1,022 ms);
        // the request at 1,630 ms tries it again, fails, and trips it to 2,232 ms; the one at
        // 2,240 ms finds it back. Each failure is retried on b 5 ms after its 2 ms answer.
        let plan = plan(&[
            "failover", "--rate", "100", "--before", "1s", "--window", "1s", "--after", "1s",
        ]);
        let gateway = ModelGateway {
            service_ns: 2 * MS,
            retry_delay_ns: 5 * MS,
            trip: 3,
            cooldown_ns: 600 * MS,
        };
        let observed = gateway.observe(&plan, 1_000 * MS);
        let joined = Joined::of(&observed);
        let (f, notes) = figures(&plan, &observed, &joined);
        let figure = |name: &str| f[name].unwrap_or_else(|| panic!("{name}: {notes:?}"));
        // The last arrival at a before a quiet 500 ms (--gap): the third failure, 20 ms in.
        assert_eq!(figure("switch_over_ms"), 20.0);
        assert_eq!(figure("return_ms"), 240.0);
        // Attempt to attempt: the 2 ms answer and the 5 ms delay.
        assert_eq!(figure("retry_delay_ms"), 7.0);
        // 9 ms through a failure against 2 ms straight to b.
        assert_eq!(figure("failover_penalty_ms"), 7.0);
        assert_eq!(figure("failed_over_requests"), 4.0);
        assert_eq!(figure("amplification"), 304.0 / 300.0);
        assert_eq!(figure("error_rate_window"), 0.0);
    }
}
