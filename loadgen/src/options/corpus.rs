//! Options of `loadgen corpus`: a seeded synthetic request corpus for `--requests-file`.

use std::path::PathBuf;

use clap::Args;

use crate::generator::corpus::synth::{Dist, Spec, PRESETS};
use crate::generator::plan::PlanError;

/// Options of `loadgen corpus`.
#[derive(Debug, Clone, Args)]
pub struct CorpusArgs {
    /// Where to write the JSON lines (`-`: standard output).
    #[arg(long)]
    pub out: PathBuf,
    /// Requests to write. Default 1000.
    #[arg(long, default_value_t = 1_000)]
    pub count: usize,
    /// Seed of every draw: the same seed writes the same file.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Prompt and output lengths as a published workload has them: sharegpt,
    /// azure-conversation or azure-code (docs/loadgen-workloads.md names each one's source).
    /// --prompt-tokens and --output-tokens override. Default sharegpt.
    #[arg(long, default_value = "sharegpt")]
    pub preset: String,
    /// Prompt tokens: fixed:N, uniform:LO-HI or lognormal:MEDIAN,SIGMA.
    #[arg(long)]
    pub prompt_tokens: Option<String>,
    /// Output tokens asked for (max_tokens), in the same forms.
    #[arg(long)]
    pub output_tokens: Option<String>,
    /// Prompts are cut to this many tokens. Default 25000 (bodies up to about 100 KB).
    #[arg(long, default_value_t = 25_000)]
    pub max_prompt_tokens: u64,
    /// Output tokens are cut to this many. Default 4096.
    #[arg(long, default_value_t = 4_096)]
    pub max_output_tokens: u64,
    /// Models and their shares, like gpt-4o-mini=0.7,gpt-4o=0.3. Default gpt-4o-mini.
    #[arg(long, default_value = "gpt-4o-mini=1")]
    pub models: String,
    /// Share of requests that stream, 0 to 1. Default 0.
    #[arg(long, default_value_t = 0.0)]
    pub stream_share: f64,
    /// Share of requests that carry a tool definition, 0 to 1. Default 0.
    #[arg(long, default_value_t = 0.0)]
    pub tools_share: f64,
    /// Share of requests that are new, 0 to 1; the rest repeat an earlier request byte for
    /// byte (what an exact cache hits). Default 1.
    #[arg(long, default_value_t = 1.0)]
    pub distinct: f64,
}

impl CorpusArgs {
    /// The validated spec.
    pub fn spec(&self) -> Result<Spec, PlanError> {
        let preset = PRESETS
            .iter()
            .find(|p| p.name == self.preset)
            .ok_or_else(|| {
                PlanError::Named(
                    "--preset",
                    self.preset.clone(),
                    "sharegpt, azure-conversation or azure-code",
                )
            })?;
        let dist = |name: &'static str, text: &Option<String>, default: Dist| match text {
            None => Ok(default),
            Some(t) => Dist::parse(t).ok_or_else(|| {
                PlanError::Named(
                    name,
                    t.clone(),
                    "fixed:N, uniform:LO-HI or lognormal:MEDIAN,SIGMA (counts from 1)",
                )
            }),
        };
        let share = |name: &'static str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(v)
            } else {
                Err(PlanError::Named(name, v.to_string(), "a share from 0 to 1"))
            }
        };
        let models = self
            .models
            .split(',')
            .map(|m| {
                let (name, share) = m.split_once('=').unwrap_or((m, "1"));
                let share = share.trim().parse::<f64>().ok().filter(|s| *s > 0.0);
                match (name.trim(), share) {
                    (name, Some(share)) if !name.is_empty() => Ok((name.to_string(), share)),
                    _ => Err(PlanError::Named(
                        "--models",
                        self.models.clone(),
                        "models with shares above 0, like gpt-4o-mini=0.7,gpt-4o=0.3",
                    )),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if self.count == 0 || self.count > 10_000_000 {
            return Err(PlanError::Count("--count", self.count, 10_000_000));
        }
        Ok(Spec {
            count: self.count,
            seed: self.seed,
            prompt: dist("--prompt-tokens", &self.prompt_tokens, preset.prompt)?,
            output: dist("--output-tokens", &self.output_tokens, preset.output)?,
            max_prompt_tokens: self.max_prompt_tokens.max(1),
            max_output_tokens: self.max_output_tokens.max(1),
            models,
            stream_share: share("--stream-share", self.stream_share)?,
            tools_share: share("--tools-share", self.tools_share)?,
            distinct: share("--distinct", self.distinct)?,
        })
    }
}
