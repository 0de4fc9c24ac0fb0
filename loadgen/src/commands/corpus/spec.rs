//! `loadgen corpus`'s options checked into the spec of the corpus it writes.

use crate::generator::corpus::synth::{Dist, Spec, WORKLOADS};
use crate::generator::plan_error::PlanError;
use crate::options::CorpusArgs;

/// The validated spec of `args`.
pub(crate) fn spec(args: &CorpusArgs) -> Result<Spec, PlanError> {
    let (prompt, output) = lengths(args)?;
    let share = |name: &'static str, v: f64| {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(PlanError::Named(name, v.to_string(), "a share from 0 to 1"))
        }
    };
    let models = models(&args.models)?;
    if args.count == 0 || args.count > 10_000_000 {
        return Err(PlanError::Count("--count", args.count, 10_000_000));
    }
    Ok(Spec {
        count: args.count,
        seed: args.seed,
        prompt,
        output,
        max_prompt_tokens: args.max_prompt_tokens.max(1),
        max_output_tokens: args.max_output_tokens.max(1),
        models,
        stream_share: share("--stream-share", args.stream_share)?,
        tools_share: share("--tools-share", args.tools_share)?,
        distinct: share("--distinct", args.distinct)?,
    })
}

/// The prompt and output lengths: the workload's, each overridden by its flag.
pub(super) fn lengths(args: &CorpusArgs) -> Result<(Dist, Dist), PlanError> {
    let workload = WORKLOADS
        .iter()
        .find(|p| p.name == args.workload)
        .ok_or_else(|| {
            PlanError::Named(
                "--workload",
                args.workload.clone(),
                "sharegpt, azure-conversation or azure-code",
            )
        })?;
    let prompt = dist("--prompt-tokens", &args.prompt_tokens, workload.prompt)?;
    let output = dist("--output-tokens", &args.output_tokens, workload.output)?;
    Ok((prompt, output))
}

/// The distribution flag `name` gives, or `default`.
fn dist(name: &'static str, text: &Option<String>, default: Dist) -> Result<Dist, PlanError> {
    match text {
        None => Ok(default),
        Some(t) => Dist::parse(t).ok_or_else(|| {
            PlanError::Named(
                name,
                t.clone(),
                "fixed:N, uniform:LO-HI or lognormal:MEDIAN,SIGMA (counts from 1)",
            )
        }),
    }
}

/// `--models`: names and their shares, like gpt-4o-mini=0.7,gpt-4o=0.3.
pub(super) fn models(text: &str) -> Result<Vec<(String, f64)>, PlanError> {
    text.split(',')
        .map(|m| {
            let (name, share) = m.split_once('=').unwrap_or((m, "1"));
            let share = share.trim().parse::<f64>().ok().filter(|s| *s > 0.0);
            match (name.trim(), share) {
                (name, Some(share)) if !name.is_empty() => Ok((name.to_string(), share)),
                _ => Err(PlanError::Named(
                    "--models",
                    text.to_string(),
                    "models with shares above 0, like gpt-4o-mini=0.7,gpt-4o=0.3",
                )),
            }
        })
        .collect()
}
