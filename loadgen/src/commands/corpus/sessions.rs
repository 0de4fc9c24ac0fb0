//! `loadgen corpus --sessions N`: the options checked into the spec of the sessions it writes,
//! and what it says of them.

use gatebench_shared::latency::Distribution;

use crate::generator::corpus::synth::Dist;
use crate::generator::plan_error::PlanError;
use crate::generator::sessions::synth::{Spec, Written};
use crate::generator::sessions::{
    DEFAULT_TOOL_RESULT_TOKENS, MAX_BRANCHES, MAX_SESSIONS, MAX_TOOL_ROUNDS,
};
use crate::options::{CorpusArgs, CORPUS_MODELS};

use super::spec::{lengths, models};

/// Most tokens a system prompt, a context or a tool result may hold (as a file may).
const MAX_TOKENS: u64 = 1_000_000;

/// Most tool definitions.
const MAX_TOOLS: usize = 1_000;

/// The validated spec of `args`, which ask for `count` sessions.
pub(super) fn spec(args: &CorpusArgs, count: usize) -> Result<Spec, PlanError> {
    requests_only(args)?;
    if count == 0 || count > MAX_SESSIONS {
        return Err(PlanError::Count("--sessions", count, MAX_SESSIONS));
    }
    let (user, output) = lengths(args)?;
    let tokens = |name: &'static str, v: Option<u64>| match v {
        Some(n) if n > MAX_TOKENS => {
            Err(PlanError::Range(name, n as usize, 0, MAX_TOKENS as usize))
        }
        v => Ok(v.unwrap_or(0)),
    };
    let system_tokens = tokens("--system-tokens", args.system_tokens)?;
    let prefix_groups = args.prefix_groups.unwrap_or(1);
    if prefix_groups == 0 || prefix_groups > count {
        return Err(PlanError::Range("--prefix-groups", prefix_groups, 1, count));
    }
    if prefix_groups > 1 && system_tokens == 0 {
        return Err(PlanError::Needs(
            "--prefix-groups",
            "--system-tokens: each group shares a system prompt of its own",
        ));
    }
    let (tools, tool_rounds, tool_result_tokens) = tool_settings(args)?;
    Ok(Spec {
        sessions: count,
        seed: args.seed,
        turns: turns(&args.turns)?,
        system_tokens,
        prefix_groups,
        context_tokens: tokens("--context-tokens", args.context_tokens)?,
        user,
        max_user_tokens: args.max_prompt_tokens.max(1),
        output,
        max_output_tokens: args.max_output_tokens.max(1),
        models: match args.models.as_str() {
            CORPUS_MODELS => Vec::new(),
            text => models(text)?,
        },
        tools,
        tool_rounds,
        tool_result_tokens,
        think: think(&args.think)?,
        branches: match args.branches.unwrap_or(0) {
            n if n > MAX_BRANCHES => {
                return Err(PlanError::Range("--branches", n, 0, MAX_BRANCHES))
            }
            n => n,
        },
        branch_turns: counts("--branch-turns", &args.branch_turns, 3)?,
    })
}

/// `--tools`, `--tool-rounds` and `--tool-result-tokens`, checked.
fn tool_settings(args: &CorpusArgs) -> Result<(usize, u32, u32), PlanError> {
    let tools = args.tools.unwrap_or(0);
    if tools > MAX_TOOLS {
        return Err(PlanError::Range("--tools", tools, 0, MAX_TOOLS));
    }
    let rounds = args.tool_rounds.unwrap_or(0);
    if rounds > MAX_TOOL_ROUNDS {
        let (n, most) = (rounds as usize, MAX_TOOL_ROUNDS as usize);
        return Err(PlanError::Range("--tool-rounds", n, 0, most));
    }
    if rounds > 0 && tools == 0 {
        return Err(PlanError::Needs(
            "--tool-rounds",
            "--tools: an upstream calls only the tools a request offers",
        ));
    }
    let result = args
        .tool_result_tokens
        .unwrap_or(DEFAULT_TOOL_RESULT_TOKENS);
    if result == 0 || u64::from(result) > MAX_TOKENS {
        let n = result as usize;
        return Err(PlanError::Range(
            "--tool-result-tokens",
            n,
            1,
            MAX_TOKENS as usize,
        ));
    }
    Ok((tools, rounds, result))
}

/// `--turns`: N or a distribution of counts; default 5.
fn turns(text: &Option<String>) -> Result<Dist, PlanError> {
    counts("--turns", text, 5)
}

/// A count or a distribution of counts given to `flag`; `default` when not given.
fn counts(flag: &'static str, text: &Option<String>, default: u64) -> Result<Dist, PlanError> {
    let Some(text) = text else {
        return Ok(Dist::Fixed(default));
    };
    let n = text.parse::<u64>().ok().filter(|n| *n > 0).map(Dist::Fixed);
    n.or_else(|| Dist::parse(text)).ok_or_else(|| {
        PlanError::Named(
            flag,
            text.clone(),
            "N, uniform:LO-HI or lognormal:MEDIAN,SIGMA (counts from 1)",
        )
    })
}

/// `--think`, if given.
fn think(text: &Option<String>) -> Result<Option<Distribution>, PlanError> {
    text.as_ref()
        .map(|t| {
            t.parse::<Distribution>().map_err(|_| {
                PlanError::Named(
                    "--think",
                    t.clone(),
                    "a duration like 2s, or uniform:1s..5s, normal:2s,500ms or lognormal:2s,0.5",
                )
            })
        })
        .transpose()
}

/// Refuses the flags that shape requests alone, when given with --sessions, and the flags that
/// shape sessions alone, when given without.
fn requests_only(args: &CorpusArgs) -> Result<(), PlanError> {
    let why = "it shapes requests; a sessions file holds --sessions N sessions";
    let given: [(&'static str, bool); 4] = [
        ("--count", args.count != 1_000),
        ("--stream-share", args.stream_share != 0.0),
        ("--tools-share", args.tools_share != 0.0),
        ("--distinct", args.distinct != 1.0),
    ];
    match given.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(PlanError::Excludes("--sessions", flag, why)),
        None => Ok(()),
    }
}

/// Refuses the flags that shape sessions when no --sessions is given.
pub(super) fn sessions_only(args: &CorpusArgs) -> Result<(), PlanError> {
    let given: [(&'static str, bool); 10] = [
        ("--branches", args.branches.is_some()),
        ("--branch-turns", args.branch_turns.is_some()),
        ("--turns", args.turns.is_some()),
        ("--system-tokens", args.system_tokens.is_some()),
        ("--prefix-groups", args.prefix_groups.is_some()),
        ("--context-tokens", args.context_tokens.is_some()),
        ("--tools", args.tools.is_some()),
        ("--tool-rounds", args.tool_rounds.is_some()),
        ("--tool-result-tokens", args.tool_result_tokens.is_some()),
        ("--think", args.think.is_some()),
    ];
    match given.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(PlanError::Needs(flag, "--sessions N: it shapes sessions")),
        None => Ok(()),
    }
}

/// What `loadgen corpus --sessions` says it wrote.
pub(super) fn summary(spec: &Spec, written: &Written) -> String {
    format!(
        "loadgen: {} sessions, {} turns ({} to {} a session), {} prefix group{}, mean {:.0} \
         tokens a user message, {} bytes",
        written.sessions,
        written.turns,
        written.fewest_turns,
        written.most_turns,
        spec.prefix_groups,
        if spec.prefix_groups == 1 { "" } else { "s" },
        written.mean_user_tokens,
        written.bytes
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::commands::CommandArgs;

    fn args(flags: &[&str]) -> CorpusArgs {
        let line = ["loadgen", "corpus", "--out", "-"].iter().chain(flags);
        match crate::Cli::try_parse_from(line)
            .expect("the test's flags parse")
            .command
        {
            CommandArgs::Corpus(args) => args,
            _ => unreachable!("a corpus command line"),
        }
    }

    fn refused(flags: &[&str]) -> String {
        let a = args(flags);
        let err = match a.sessions {
            Some(n) => spec(&a, n).unwrap_err(),
            None => sessions_only(&a).unwrap_err(),
        };
        err.to_string()
    }

    #[test]
    fn flags_make_the_spec() {
        let s = spec(
            &args(&[
                "--sessions",
                "20",
                "--turns",
                "uniform:2-4",
                "--system-tokens",
                "2000",
                "--prefix-groups",
                "4",
                "--context-tokens",
                "100",
                "--tools",
                "3",
                "--tool-rounds",
                "2",
                "--tool-result-tokens",
                "50",
                "--think",
                "lognormal:2s,0.5",
                "--prompt-tokens",
                "fixed:30",
                "--models",
                "a=1,b=1",
            ]),
            20,
        )
        .unwrap();
        assert_eq!((s.sessions, s.turns), (20, Dist::Uniform(2, 4)));
        assert_eq!(
            (s.system_tokens, s.prefix_groups, s.context_tokens),
            (2000, 4, 100)
        );
        assert_eq!((s.tools, s.tool_rounds, s.tool_result_tokens), (3, 2, 50));
        assert_eq!(s.user, Dist::Fixed(30));
        assert_eq!(s.models.len(), 2);
        assert!(s.think.is_some());
        let plain = spec(&args(&["--sessions", "5", "--turns", "7"]), 5).unwrap();
        assert_eq!(
            (plain.turns, plain.prefix_groups, plain.tools),
            (Dist::Fixed(7), 1, 0)
        );
        assert!(plain.models.is_empty() && plain.think.is_none());
        assert_eq!(plain.tool_result_tokens, DEFAULT_TOOL_RESULT_TOKENS);
    }

    #[test]
    fn bad_flags_are_refused_by_name() {
        let cases: [(&[&str], &str); 9] = [
            (&["--sessions", "0"], "--sessions 0"),
            (
                &["--sessions", "3", "--count", "5"],
                "--sessions excludes --count",
            ),
            (
                &["--sessions", "3", "--stream-share", "0.5"],
                "excludes --stream-share",
            ),
            (&["--turns", "3"], "--turns needs --sessions"),
            (
                &["--sessions", "3", "--prefix-groups", "2"],
                "--prefix-groups needs --system-tokens",
            ),
            (
                &[
                    "--sessions",
                    "3",
                    "--system-tokens",
                    "9",
                    "--prefix-groups",
                    "4",
                ],
                "--prefix-groups 4",
            ),
            (
                &["--sessions", "3", "--tools", "1", "--tool-rounds", "65"],
                "--tool-rounds 65",
            ),
            (
                &["--sessions", "3", "--tool-rounds", "1"],
                "--tool-rounds needs --tools",
            ),
            (
                &["--sessions", "3", "--think", "soon"],
                "invalid --think 'soon'",
            ),
        ];
        for (flags, want) in cases {
            let got = refused(flags);
            assert!(got.contains(want), "{flags:?}: {got}");
        }
        assert!(refused(&["--sessions", "3", "--turns", "0"]).contains("invalid --turns '0'"));
    }
}
