//! Options of `loadgen corpus`: a seeded synthetic request corpus for `--requests-file`.

use std::path::PathBuf;

use clap::Args;

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
