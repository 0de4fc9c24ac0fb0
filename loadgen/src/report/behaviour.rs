//! A `loadgen behaviour` result (schema `gatebench.loadgen.behaviour/1`) as its tables: one row
//! per gateway with the scenario's figures and their intervals, each key's share of a rate
//! limit, each upstream's share of the traffic, the refusal a client got, each trial's timeline;
//! terminal, Markdown and CSV (the HTML page is `html::behaviour_page`).

use super::table::Table;
use crate::results::behaviour::{BehaviourResult, GatewayBehaviour, Trial};

/// The figures each scenario leads with, in order.
pub fn headline(scenario: &str) -> &'static [&'static str] {
    match scenario {
        "failover" => &[
            "switch_over_ms",
            "return_ms",
            "retry_delay_ms",
            "failover_penalty_ms",
            "amplification",
            "error_rate_before",
            "error_rate_window",
            "error_rate_after",
        ],
        "retries" => &[
            "amplification",
            "retry_delay_ms",
            "retried_share",
            "retry_after_honoured",
            "error_rate_window",
        ],
        "cache" => &[
            "hit_rate",
            "hit_rate_possible",
            "hit_p50_ms",
            "miss_p50_ms",
            "hit_p99_ms",
            "miss_p99_ms",
        ],
        "limits" => &[
            "accepted_of_limit",
            "accepted_of_limit_max",
            "refused_share",
            "refused_reached_upstream",
        ],
        _ => &[
            "share_off_weight_max",
            "slow_share_before",
            "slow_share_window",
            "shift_ms",
            "error_rate",
        ],
    }
}

/// One row per gateway: the scenario's figures as they read (estimate [interval]).
pub fn figures_table(result: &BehaviourResult) -> Table {
    let names = headline(&result.scenario);
    let mut header = vec!["gateway", "source"];
    header.extend_from_slice(names);
    let mut table = Table::new(&header);
    for g in &result.gateways {
        let mut row = vec![g.name.clone(), g.source.clone()];
        for name in names {
            row.push(g.figures.get(*name).map_or("-".into(), |f| f.said.clone()));
        }
        table.push(row);
    }
    table
}

fn keys_table(g: &GatewayBehaviour) -> Table {
    let mut table = Table::new(&[
        "key",
        "sent/s",
        "accepted/s",
        "of the limit",
        "refused yet upstream",
    ]);
    for k in &g.keys {
        table.push(vec![
            k.key.clone(),
            format!("{:.2}", k.sent_per_s),
            format!("{:.2}", k.accepted_per_s),
            format!("{:.0}%", k.of_limit * 100.0),
            k.refused_reached_upstream.to_string(),
        ]);
    }
    table
}

fn shares_table(g: &GatewayBehaviour) -> Table {
    let mut table = Table::new(&["upstream", "weight", "expected", "before", "in the window"]);
    for s in &g.shares {
        table.push(vec![
            s.upstream.clone(),
            format!("{}", s.weight),
            format!("{:.1}%", s.expected * 100.0),
            format!("{:.1}%", s.before * 100.0),
            format!("{:.1}%", s.during * 100.0),
        ]);
    }
    table
}

/// A trial's seconds: what the client sent and got, what each upstream received.
pub fn timeline_table(trial: &Trial) -> Table {
    let upstreams: Vec<&String> = trial.upstream_requests.keys().collect();
    let mut header = vec!["second", "phase", "sent", "errors", "p50 ms", "p99 ms"];
    header.extend(upstreams.iter().map(|s| s.as_str()));
    let mut table = Table::new(&header);
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    for s in &trial.seconds {
        let mut row = vec![
            s.second.to_string(),
            s.phase.clone(),
            s.sent.to_string(),
            s.errors.to_string(),
            ms(s.p50_ms),
            ms(s.p99_ms),
        ];
        row.extend(
            upstreams
                .iter()
                .map(|u| s.by_upstream.get(*u).copied().unwrap_or(0).to_string()),
        );
        table.push(row);
    }
    table
}

fn lead(result: &BehaviourResult) -> String {
    let s = &result.settings;
    format!(
        "loadgen behaviour {}: {} req/s, {} trial(s) of {} ms before, {} ms window ({} on {}), {} ms after; marks: {}\n",
        result.scenario,
        s.rate,
        s.trials,
        s.before_ms,
        s.window_ms,
        match result.scenario.as_str() {
            "balance" => format!("{} ms slower", s.slow_ms.unwrap_or(0.0)),
            "cache" | "limits" => "nothing".into(),
            _ => s.fault.clone(),
        },
        result.upstreams.first().map_or("-", String::as_str),
        s.after_ms,
        s.mark
    )
}

fn per_gateway(result: &BehaviourResult, markdown: bool) -> String {
    let mut out = String::new();
    let render = |t: &Table| {
        if markdown {
            t.to_markdown()
        } else {
            t.to_text()
        }
    };
    for g in &result.gateways {
        let said = |title: &str| {
            if markdown {
                format!("\n### {}: {title}\n\n", g.name)
            } else {
                format!("\n{}: {title}\n", g.name)
            }
        };
        if !g.keys.is_empty() {
            out.push_str(&said("each key against the limit"));
            out.push_str(&render(&keys_table(g)));
        }
        if !g.shares.is_empty() {
            out.push_str(&said("each upstream's share"));
            out.push_str(&render(&shares_table(g)));
        }
        if let Some(r) = &g.refusal {
            out.push_str(&said("a refusal as the client got it"));
            let headers: Vec<String> = r.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            out.push_str(&format!(
                "status {}; {}; body: {}\n",
                r.status,
                if headers.is_empty() {
                    "no rate-limit headers".into()
                } else {
                    headers.join(", ")
                },
                r.body.replace('\n', " ")
            ));
        }
        for n in &g.notes {
            out.push_str(&format!(
                "{}note: {n}\n",
                if markdown { "- " } else { "  " }
            ));
        }
        if markdown {
            if let Some(t) = g.trials.last() {
                out.push_str(&said("the last trial, second by second"));
                out.push_str(&timeline_table(t).to_markdown());
            }
        }
    }
    out
}

fn closing(result: &BehaviourResult) -> String {
    if result.valid {
        String::new()
    } else {
        format!("\nNOT VALID: {}\n", result.invalid_reasons.join("; "))
    }
}

/// The terminal report.
pub fn terminal(result: &BehaviourResult) -> String {
    let mut out = lead(result);
    out.push('\n');
    out.push_str(&figures_table(result).to_text());
    out.push_str(&per_gateway(result, false));
    out.push_str(&closing(result));
    out
}

/// A Markdown write-up.
pub fn markdown(result: &BehaviourResult) -> String {
    let mut out = format!(
        "# Gateway behaviour: {}\n\n{}\n",
        result.scenario,
        lead(result)
    );
    out.push_str("Each figure is the mean over trials with its 95% Student's t interval; `source` says whether requests were followed by their marks or by the upstreams' counts.\n\n");
    out.push_str(&figures_table(result).to_markdown());
    out.push_str(&per_gateway(result, true));
    out.push_str(&closing(result));
    out
}

/// Numbers only: one row per gateway and figure.
pub fn csv(result: &BehaviourResult) -> String {
    let mut table = Table::new(&[
        "gateway",
        "source",
        "figure",
        "estimate",
        "low",
        "high",
        "per_trial",
    ]);
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    for g in &result.gateways {
        for (name, f) in &g.figures {
            table.push(vec![
                g.name.clone(),
                g.source.clone(),
                name.clone(),
                num(f.estimate),
                num(f.low),
                num(f.high),
                f.per_trial
                    .iter()
                    .map(|v| num(*v))
                    .collect::<Vec<_>>()
                    .join(" "),
            ]);
        }
    }
    table.to_csv()
}
