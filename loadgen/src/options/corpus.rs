//! Options of `loadgen corpus`: a seeded synthetic request corpus for `--requests-file`, or with
//! `--sessions N` seeded sessions for `run --sessions`.

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
    /// --prompt-tokens and --output-tokens override. Default sharegpt. `--preset`, its former
    /// name, is still read.
    #[arg(long, alias = "preset", default_value = "sharegpt")]
    pub workload: String,
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
    /// Models and their shares, like gpt-4o-mini=0.7,gpt-4o=0.3. Default gpt-4o-mini (with
    /// --sessions: none written, the run's).
    #[arg(long, default_value = DEFAULT_MODELS)]
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
    /// Write this many sessions (conversations, for `run --sessions`) instead of requests:
    /// user messages follow --prompt-tokens, each turn's max_tokens --output-tokens. Default:
    /// requests.
    #[arg(long, value_name = "N")]
    pub sessions: Option<usize>,
    /// Turns per session: N, uniform:LO-HI or lognormal:MEDIAN,SIGMA. Default 5.
    #[arg(long)]
    pub turns: Option<String>,
    /// Tokens of the system prompt every session of a prefix group shares. Default 0 (none).
    #[arg(long)]
    pub system_tokens: Option<u64>,
    /// Prefix groups: session i shares the system prompt of group i mod N. Default 1.
    #[arg(long)]
    pub prefix_groups: Option<usize>,
    /// Tokens of each session's own context, a second system message. Default 0 (none).
    #[arg(long)]
    pub context_tokens: Option<u64>,
    /// Tool definitions every session offers (the same in all). Default 0.
    #[arg(long)]
    pub tools: Option<usize>,
    /// Most tool rounds a turn takes (needs --tools). Default 0.
    #[arg(long)]
    pub tool_rounds: Option<u32>,
    /// Tokens of each tool result sent back. Default 64.
    #[arg(long)]
    pub tool_result_tokens: Option<u32>,
    /// Think time before each turn after the first: a duration or a distribution like
    /// lognormal:2s,0.5, drawn seeded. Default: none written (the run's --think).
    #[arg(long)]
    pub think: Option<String>,
    /// Branches (sub-agents) each session of two or more turns forks: each starts when a
    /// seeded turn is answered, with a history of its own, and the next turn waits for it and
    /// carries its last exchange. Default 0.
    #[arg(long)]
    pub branches: Option<usize>,
    /// Turns per branch: N, uniform:LO-HI or lognormal:MEDIAN,SIGMA. Default 3.
    #[arg(long)]
    pub branch_turns: Option<String>,
}

/// `--models` when not given.
pub const DEFAULT_MODELS: &str = "gpt-4o-mini=1";
