//! Each command from its options to its exit code, one folder per command (`run`, `overhead`,
//! `compare`, `sweep`, `ladder`, `capacity`, `profile`, `merge`, `corpus`,
//! `report`, `check_preset`, `selftest`), none importing another. Each implements [`Command`]
//! (`command`): its plan, its execution, its options printed as a preset. One dispatch
//! (`dispatch`) runs a command, prints its configuration (`print_config`) or checks a preset
//! for it (`check_preset`). The command line, [`Cli`] and its list of commands
//! ([`CommandArgs`]), is here beside that dispatch: a command is added in its own folder and in
//! this file. `main.rs` only parses and calls [`execute`].

pub mod behaviour;
pub mod capacity;
pub mod check_preset;
mod command;
pub mod compare;
mod corpus;
pub mod ladder;
pub mod merge;
pub mod overhead;
mod print_config;
pub mod profile;
mod report;
pub mod run;
pub mod selftest;
pub mod sweep;

pub use command::Command;

use clap::{Parser, Subcommand};

use crate::engine::run::{EXIT_OK, EXIT_USAGE};
use crate::options::{
    BehaviourArgs, CapacityArgs, CheckPresetArgs, CompareArgs, CorpusArgs, LadderArgs, LoadArgs,
    MergeArgs, OverheadArgs, ProfileArgs, ReportArgs, SelftestArgs, SweepArgs,
};
use crate::report::output::write_json;

/// An open-loop, rate-paced load generator that corrects coordinated omission.
#[derive(Debug, Parser)]
#[command(name = "loadgen", version)]
pub struct Cli {
    /// Print the command's resolved options (flags over the preset, defaults filled in) as a
    /// preset and exit, sending nothing; `--preset` reads the text back into the same plan.
    #[arg(long, global = true)]
    pub print_config: bool,
    #[command(subcommand)]
    pub command: CommandArgs,
}

/// The command a command line names, with its options.
#[derive(Debug, Subcommand)]
pub enum CommandArgs {
    /// Send load to one or more targets (or, with no --target, to an embedded mock) and report.
    Run(LoadArgs),
    /// Measure what gateways add to a call: paired rounds direct and through each gateway,
    /// with bootstrap intervals.
    Overhead(OverheadArgs),
    /// Compare the same constant-rate load direct and through gateways, in alternating trials,
    /// with each percentile's added latency and an interval across trials.
    Compare(CompareArgs),
    /// Sweep load levels (concurrency or rate), direct and through gateways, flagging levels
    /// whose direct baseline saturated.
    Sweep(SweepArgs),
    /// Find the highest rate each target sustains within an SLO (goodput): bracketing and
    /// narrowing over fixed-length runs; gateways searched under the direct upstream's own.
    Capacity(CapacityArgs),
    /// Open N streams at one instant per level, direct and through gateways: completions,
    /// failures, TTFT, and whether the gateway re-chunked or buffered the stream.
    Ladder(LadderArgs),
    /// Hold a steady load on one gateway and sample its process with perf after the warm-up:
    /// on-CPU and off-CPU flame graphs beside its latency, its CPU and memory, and (with
    /// --direct) what it adds and what the sampling itself cost; or --diff two folded stacks.
    Profile(Box<ProfileArgs>),
    /// Add the results (or interval logs) of the shards of one plan (`run --shard I/N`) into
    /// one result and report, exactly: histograms are added, never averaged.
    Merge(MergeArgs),
    /// Write a seeded synthetic request corpus (JSON lines) for `run --requests-file`: prompt
    /// and output lengths from a published workload's statistics or your own distributions,
    /// a models mix, shares of streaming, tool-carrying and repeated requests.
    Corpus(CorpusArgs),
    /// Measure what gateways do when their upstreams fail, throttle, repeat or differ:
    /// failover, retries, caches, rate limits and balance, steering gatebench mocks through
    /// their control routes and joining each request with what every upstream recorded.
    Behaviour(BehaviourArgs),
    /// Can this machine measure? Its kernel timer, loopback, loadgen's schedule lag, the mock's
    /// timing error and the verdicts of an identical mock and a known 20 µs delay, each beside
    /// its target; exit 3 when the host keeps them from it.
    Selftest(SelftestArgs),
    /// Render a result file again: Markdown, CSV, JSON, or a self-contained HTML page with plots.
    Report(ReportArgs),
    /// Check a preset file for a command (run, overhead, compare, sweep, ladder, capacity,
    /// profile) without sending anything: it parses and makes a valid plan. `check-profile`,
    /// its former name, still works.
    #[command(alias = "check-profile")]
    CheckPreset(CheckPresetArgs),
}

/// What to do with a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action<'a> {
    /// Run it.
    Execute,
    /// Print its resolved options as a preset.
    PrintConfig,
    /// Check its preset (this file): one line on the plan it makes.
    Check(&'a std::path::Path),
}

/// What an action gave: an exit code, or a text to show.
pub(crate) enum Outcome {
    Code(u8),
    Text(String),
}

/// Runs the command `cli` names; the process's exit code.
pub fn execute(cli: Cli) -> u8 {
    let action = if cli.print_config {
        Action::PrintConfig
    } else {
        Action::Execute
    };
    let outcome = dispatch(cli.command, action, std::env::args().collect());
    match outcome {
        Ok(Outcome::Code(code)) => code,
        Ok(Outcome::Text(text)) => {
            show(&text);
            EXIT_OK
        }
        Err(err) => {
            let err: &(dyn std::error::Error + 'static) = err.as_ref();
            gatebench_shared::say!("loadgen: {}", gatebench_shared::errors::one_line(err));
            EXIT_USAGE
        }
    }
}

/// `action` on `command`: the one switch over the commands.
pub(crate) fn dispatch(
    command: CommandArgs,
    action: Action<'_>,
    line: Vec<String>,
) -> anyhow::Result<Outcome> {
    use CommandArgs as C;
    match command {
        C::Run(args) => act(args, action, line),
        C::Overhead(args) => act(args, action, line),
        C::Compare(args) => {
            refuse_run_only_flags(&args.load, "compare").and_then(|()| act(args, action, line))
        }
        C::Sweep(args) => refuse_run_only_flags(&args.compare.load, "sweep")
            .and_then(|()| act(args, action, line)),
        C::Capacity(args) => {
            refuse_run_only_flags(&args.load, "capacity").and_then(|()| act(args, action, line))
        }
        C::Ladder(args) => {
            refuse_run_only_flags(&args.load, "ladder").and_then(|()| act(args, action, line))
        }
        C::Profile(args) => refuse_run_only_flags(&args.compare.load, "profile")
            .and_then(|()| act(*args, action, line)),
        C::Merge(args) => act(args, action, line),
        C::Corpus(args) => act(args, action, line),
        C::Selftest(args) => act(args, action, line),
        C::Behaviour(args) => act(args, action, line),
        C::Report(args) => act(args, action, line),
        C::CheckPreset(args) => act(args, action, line),
    }
}

/// Refuses, on the commands that take `run`'s flags, the ones only `run` acts on: its live
/// metrics, a shard's schedule and start (also set by LOADGEN_* variables, which a stray
/// environment could carry into them), and the HdrHistogram files only `run` writes. Taken
/// silently, each would be a setting the user believes in and the command ignores.
fn refuse_run_only_flags(run: &crate::options::LoadArgs, command: &str) -> anyhow::Result<()> {
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let given = [
        (
            "--metrics-listen",
            Some("LOADGEN_METRICS_LISTEN"),
            run.metrics_listen.clone(),
        ),
        (
            "--metrics-linger",
            Some("LOADGEN_METRICS_LINGER"),
            run.metrics_linger.clone(),
        ),
        ("--shard", Some("LOADGEN_SHARD"), run.shard.clone()),
        ("--start-at", Some("LOADGEN_START_AT"), run.start_at.clone()),
        ("--hgrm", None, path(&run.hgrm)),
        ("--hdr-log", None, path(&run.hdr_log)),
    ];
    if let Some((flag, variable, Some(value))) = given.into_iter().find(|(_, _, v)| v.is_some()) {
        let set = variable.map_or(String::new(), |v| format!(" (is {v} set?)"));
        anyhow::bail!("{flag} {value}: only `loadgen run` takes it, not `loadgen {command}`{set}");
    }
    Ok(())
}

/// `action` on one command's options.
fn act<C: Command>(args: C, action: Action<'_>, line: Vec<String>) -> anyhow::Result<Outcome> {
    match action {
        Action::Execute => Ok(Outcome::Code(C::execute(args.merged()?.plan()?, line)?)),
        Action::PrintConfig => print_config::print(args).map(Outcome::Text),
        Action::Check(path) => check_preset::describe(args, path).map(Outcome::Text),
    }
}

/// Writes `result` to `out` (when given), shows its report, and passes its exit code on.
pub(crate) fn written<R: serde::Serialize>(
    result: &R,
    out: Option<&std::path::Path>,
    report: &str,
    code: u8,
) -> anyhow::Result<u8> {
    if let Some(path) = out {
        write_json(result, path)?;
    }
    show(report);
    Ok(code)
}

/// Prints a report to stdout. A reader that went away (`| head`) is not an error: the result
/// files are already written by then.
pub(crate) fn show(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(text.as_bytes());
}
