//! Seeded sessions (`loadgen corpus --sessions N`), written as gatebench's session lines: turns
//! per session, a system prompt shared within each prefix group (session `i` in group
//! `i mod groups`, as inference-perf's `shared_prefix` has groups), per-user context, user
//! messages and `max_tokens` of given lengths, tool definitions and rounds, and think times.
//! Session `i` draws from its own stream (the seed and `i`), so the same seed writes the same
//! bytes, and a session does not change when the count does.

use std::io::Write;

use gatebench_shared::latency::Distribution;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde_json::{json, Map, Value};

use super::text::{rng_of, words};
use super::MAX_TURNS;
use crate::generator::corpus::synth::Dist;

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub sessions: usize,
    pub seed: u64,
    /// Turns per session (cut to [`MAX_TURNS`]).
    pub turns: Dist,
    /// Length of each group's system prompt, in tokens; 0: none.
    pub system_tokens: u64,
    /// Groups of sessions, each with its own system prompt; at least 1.
    pub prefix_groups: usize,
    /// Length of each session's own context (a second system message), in tokens; 0: none.
    pub context_tokens: u64,
    /// Length of each turn's user message, in tokens, cut to `max_user_tokens`.
    pub user: Dist,
    pub max_user_tokens: u64,
    /// Each turn's `max_tokens`, cut to `max_output_tokens`.
    pub output: Dist,
    pub max_output_tokens: u64,
    /// Models and their shares; empty: no model written (the run's).
    pub models: Vec<(String, f64)>,
    /// Tool definitions every session offers.
    pub tools: usize,
    /// Most tool rounds each turn takes (with tools).
    pub tool_rounds: u32,
    pub tool_result_tokens: u32,
    /// Think time before every turn after the first; `None`: none written (the run's).
    pub think: Option<Distribution>,
    /// Branches (sub-agents) a session of two or more turns forks, each after a seeded turn
    /// and joining the next, and the turns of each.
    pub branches: usize,
    pub branch_turns: Dist,
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    pub sessions: usize,
    pub turns: usize,
    pub fewest_turns: usize,
    pub most_turns: usize,
    pub bytes: usize,
    pub mean_user_tokens: f64,
}

/// Seeds of the streams that are not a session's.
const GROUP_STREAM: u64 = 0x6772_6f75_7073;
const TOOL_STREAM: u64 = 0x0074_6f6f_6c73;
const BRANCH_STREAM: u64 = 0x6272_616e_6368;

/// Writes `spec.sessions` session lines to `out`.
pub fn generate(spec: &Spec, out: &mut impl Write) -> std::io::Result<Written> {
    let groups: Vec<Option<String>> = (0..spec.prefix_groups.max(1) as u64)
        .map(|g| {
            (spec.system_tokens > 0).then(|| {
                let mut rng = rng_of(spec.seed ^ GROUP_STREAM, g);
                words(
                    &format!("System prompt {g}. "),
                    spec.system_tokens,
                    &mut rng,
                )
            })
        })
        .collect();
    let tools = (spec.tools > 0).then(|| tools(spec.tools, spec.seed));
    let mut written = Written {
        fewest_turns: usize::MAX,
        ..Written::default()
    };
    let mut user_tokens = 0u64;
    for i in 0..spec.sessions {
        let mut line = Map::new();
        line.insert("session_id".into(), format!("s{i}").into());
        if let Some(system) = &groups[i % groups.len()] {
            line.insert("system".into(), system.clone().into());
        }
        let mut rng = rng_of(spec.seed, i as u64);
        if spec.context_tokens > 0 {
            let context = words(&format!("Context of s{i}. "), spec.context_tokens, &mut rng);
            line.insert("context".into(), context.into());
        }
        if let Some(model) = pick(&spec.models, &mut rng) {
            line.insert("model".into(), model.into());
        }
        if let Some(tools) = &tools {
            line.insert("tools".into(), tools.clone());
            if spec.tool_rounds > 0 {
                line.insert("tool_rounds".into(), spec.tool_rounds.into());
                line.insert("tool_result_tokens".into(), spec.tool_result_tokens.into());
            }
        }
        let turns = turns(spec, i, &mut rng, &mut user_tokens);
        written.turns += turns.len();
        written.fewest_turns = written.fewest_turns.min(turns.len());
        written.most_turns = written.most_turns.max(turns.len());
        let count = turns.len();
        line.insert("turns".into(), Value::Array(turns));
        if spec.branches > 0 && count > 1 {
            let branches = branches(spec, i, count, &mut user_tokens);
            line.insert("branches".into(), Value::Array(branches));
        }
        let text = Value::Object(line).to_string();
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")?;
        written.bytes += text.len() + 1;
        written.sessions += 1;
    }
    if written.turns > 0 {
        written.mean_user_tokens = user_tokens as f64 / written.turns as f64;
    } else {
        written.fewest_turns = 0;
    }
    Ok(written)
}

/// Session `i`'s turns, adding their user tokens to `user_tokens`.
fn turns(spec: &Spec, i: usize, rng: &mut Pcg64Mcg, user_tokens: &mut u64) -> Vec<Value> {
    let count = spec.turns.sample(rng).clamp(1, MAX_TURNS as u64);
    (0..count)
        .map(|k| {
            let tokens = spec.user.sample(rng).min(spec.max_user_tokens).max(1);
            *user_tokens += tokens;
            let text = words(&format!("Turn {} of s{i}. ", k + 1), tokens, rng);
            let max_tokens = spec.output.sample(rng).min(spec.max_output_tokens).max(1);
            let mut turn = json!({"text": text, "max_tokens": max_tokens});
            if let Some(think) = &spec.think {
                // The first turn starts with its session; a later one after the answer.
                let us = if k == 0 { 0 } else { think.sample_us(rng) };
                turn["think_ms"] = match us % 1_000 {
                    0 => json!(us / 1_000),
                    _ => json!(us as f64 / 1e3),
                };
            }
            turn
        })
        .collect()
}

/// Session `i`'s branches, each forking after a turn drawn from 1 to `turns` − 1 and joining
/// the next; from a stream of their own, so sessions without branches keep their bytes.
fn branches(spec: &Spec, i: usize, turns: usize, user_tokens: &mut u64) -> Vec<Value> {
    let mut rng = rng_of(spec.seed ^ BRANCH_STREAM, i as u64);
    (0..spec.branches)
        .map(|b| {
            let after = rng.random_range(1..turns);
            let count = spec
                .branch_turns
                .sample(&mut rng)
                .clamp(1, MAX_TURNS as u64);
            let turns: Vec<Value> = (0..count)
                .map(|k| {
                    let tokens = spec.user.sample(&mut rng).min(spec.max_user_tokens).max(1);
                    *user_tokens += tokens;
                    let head = format!("Branch {b} turn {} of s{i}. ", k + 1);
                    let max_tokens = spec.output.sample(&mut rng).min(spec.max_output_tokens);
                    json!({"text": words(&head, tokens, &mut rng), "max_tokens": max_tokens.max(1)})
                })
                .collect();
            json!({"after_turn": after, "turns": turns})
        })
        .collect()
}

/// A model drawn by its share; `None` when there are none.
fn pick(models: &[(String, f64)], rng: &mut Pcg64Mcg) -> Option<String> {
    let total: f64 = models.iter().map(|(_, s)| s).sum();
    let mut at = rng.random::<f64>() * total;
    models
        .iter()
        .find(|(_, s)| {
            at -= s;
            at < 0.0
        })
        .or(models.last())
        .map(|(m, _)| m.clone())
}

/// `count` function definitions, the same in every session (a shared prefix).
fn tools(count: usize, seed: u64) -> Value {
    let mut rng = rng_of(seed ^ TOOL_STREAM, 0);
    let list = (0..count)
        .map(|t| {
            json!({
                "type": "function",
                "function": {
                    "name": format!("tool_{t}"),
                    "description": words(&format!("Tool {t}. "), 16, &mut rng),
                    "parameters": {
                        "type": "object",
                        "properties": {"query": {"type": "string"}},
                        "required": ["query"],
                    },
                },
            })
        })
        .collect();
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::sessions::tests::load_text;
    use crate::generator::sessions::SessionFormat;

    fn spec() -> Spec {
        Spec {
            sessions: 40,
            seed: 7,
            turns: Dist::Uniform(2, 6),
            system_tokens: 300,
            prefix_groups: 3,
            context_tokens: 50,
            user: Dist::LogNormal {
                median: 40.0,
                sigma: 0.5,
            },
            max_user_tokens: 200,
            output: Dist::Fixed(32),
            max_output_tokens: 4_096,
            models: vec![("a".into(), 1.0), ("b".into(), 1.0)],
            tools: 4,
            tool_rounds: 2,
            tool_result_tokens: 100,
            think: Some("lognormal:2s,0.5".parse().unwrap()),
            branches: 0,
            branch_turns: Dist::Fixed(3),
        }
    }

    fn text_of(spec: &Spec) -> (String, Written) {
        let mut out = Vec::new();
        let written = generate(spec, &mut out).unwrap();
        (String::from_utf8(out).unwrap(), written)
    }

    #[test]
    fn the_same_seed_writes_the_same_bytes() {
        let (a, written) = text_of(&spec());
        assert_eq!(a, text_of(&spec()).0);
        assert_ne!(a, text_of(&Spec { seed: 8, ..spec() }).0);
        assert_eq!(written.sessions, 40);
        assert_eq!(written.bytes, a.len());
        assert!((2..=6).contains(&written.fewest_turns), "{written:?}");
        // A session does not change when the count does.
        let (fewer, _) = text_of(&Spec {
            sessions: 10,
            ..spec()
        });
        assert!(a.starts_with(&fewer));
    }

    #[test]
    fn branches_fork_off_a_turn_and_leave_the_sessions_own_bytes_alone() {
        let plain = text_of(&spec()).0;
        let branched = Spec {
            branches: 2,
            ..spec()
        };
        let text = text_of(&branched).0;
        assert_eq!(text, text_of(&branched).0, "seeded");
        let set = load_text("synth", &text).unwrap();
        for (line, (session, plain)) in text.lines().zip(set.sessions.iter().zip(plain.lines())) {
            let mut line: serde_json::Value = serde_json::from_str(line).unwrap();
            line.as_object_mut().unwrap().remove("branches");
            assert_eq!(
                line,
                serde_json::from_str::<serde_json::Value>(plain).unwrap()
            );
            assert_eq!(session.branches.len(), 2);
            for b in &session.branches {
                assert!(b.after + 1 == b.join && b.join < session.turns.len());
                assert_eq!(b.turns.len(), 3);
            }
        }
    }

    #[test]
    fn generated_sessions_load_back_as_written() {
        let (text, written) = text_of(&spec());
        let set = load_text("synth", &text).unwrap();
        assert_eq!(set.format, SessionFormat::Gatebench);
        assert_eq!(set.sessions.len(), 40);
        let turns: usize = set.sessions.iter().map(|s| s.turns.len()).sum();
        assert_eq!(turns, written.turns);
        let s = &set.sessions;
        // Groups share their system prompt, and only theirs.
        assert_eq!(s[0].preamble[0], s[3].preamble[0]);
        assert_ne!(s[0].preamble[0], s[1].preamble[0]);
        assert_eq!(s[0].preamble[0].content.len(), 1_200);
        assert_eq!(s[0].preamble[1].content.len(), 200);
        assert_ne!(s[0].preamble[1], s[3].preamble[1]);
        assert_eq!(s[0].tools, s[1].tools);
        assert_eq!(s[0].tools.as_ref().unwrap().as_array().unwrap().len(), 4);
        let models: std::collections::BTreeSet<_> =
            s.iter().map(|s| s.model.clone().unwrap()).collect();
        assert_eq!(models.len(), 2);
        let mut thinks = Vec::new();
        for session in s {
            assert_eq!(session.turns[0].think_us, Some(0));
            for t in &session.turns {
                assert_eq!(
                    (t.max_tokens, t.tool_rounds, t.tool_result_tokens),
                    (Some(32), 2, 100)
                );
                assert!((4..=800).contains(&t.user.len()), "{}", t.user.len());
            }
            thinks.extend(session.turns[1..].iter().map(|t| t.think_us.unwrap()));
        }
        thinks.sort_unstable();
        let median = thinks[thinks.len() / 2];
        assert!((1_400_000..=2_800_000).contains(&median), "{median}");
    }

    #[test]
    fn bare_sessions_write_only_turns() {
        let bare = Spec {
            system_tokens: 0,
            prefix_groups: 1,
            context_tokens: 0,
            models: vec![],
            tools: 0,
            tool_rounds: 0,
            think: None,
            turns: Dist::Fixed(3),
            ..spec()
        };
        let (text, written) = text_of(&bare);
        assert_eq!((written.turns, written.most_turns), (120, 3));
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["session_id", "turns"]);
        assert!(first["turns"][1].get("think_ms").is_none());
        let set = load_text("bare", &text).unwrap();
        assert!(set
            .sessions
            .iter()
            .all(|s| s.preamble.is_empty() && s.model.is_none()));
    }
}
