//! The `mock-upstream` command line.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;

use crate::config::RawSettings;
use crate::server::MockServer;

/// A deterministic mock LLM provider (OpenAI chat completions) that is never the bottleneck.
#[derive(Debug, Parser)]
#[command(name = "mock-upstream", version)]
pub struct Cli {
    /// TOML file of settings (keys as the flags, like `ttft = "200ms"`); flags and MOCK_*
    /// variables win over it.
    #[arg(long, env = "MOCK_CONFIG")]
    pub config: Option<PathBuf>,
    /// Print the resolved configuration as TOML and exit.
    #[arg(long)]
    pub print_config: bool,
    #[command(flatten)]
    pub settings: RawSettings,
}

/// Runs the mock until SIGINT or SIGTERM.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let file = match &cli.config {
        Some(path) => RawSettings::from_file(path)?,
        None => RawSettings::default(),
    };
    let config = cli.settings.over(file).validate()?;
    if cli.print_config {
        print!("{}", config.to_toml());
        return Ok(());
    }
    let threads = config.threads;
    let tls = config.tls.clone();
    // Every open stream is a descriptor: raise the soft limit before accepting any.
    let files = gatebench_shared::host::raise_open_file_limit()
        .map(|l| format!("open files {}/{}", l.soft, l.hard))
        .unwrap_or_else(|e| format!("open-file limit unknown: {e}"));
    let server = MockServer::start(config)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    eprintln!(
        "mock-upstream {} listening on {scheme}://{} (HTTP/1.1 and HTTP/2; {threads} threads, {files})",
        env!("CARGO_PKG_VERSION"),
        server.local_addr()
    );
    if let Some(tls) = &tls {
        eprintln!(
            "mock-upstream: TLS certificate for {} signed by the CA in {} (trust that file)",
            tls.names.join(", "),
            tls.ca_file.display()
        );
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot build the signal runtime")?
        .block_on(wait_for_signal())?;
    eprintln!("mock-upstream: shutting down");
    let summary = emission_summary(&server);
    server.shutdown();
    eprintln!("{summary}");
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("cannot watch SIGINT")?,
        _ = term.recv() => {}
    }
    Ok(())
}

fn emission_summary(server: &MockServer) -> String {
    let m = server.metrics();
    let e = &m.emission_error;
    format!(
        "mock-upstream: {} connections; emission error over {} timed events: \
         p50 {}us p99 {}us max {}us",
        m.connections_opened(),
        e.count(),
        e.quantile_us(0.5),
        e.quantile_us(0.99),
        e.max_us()
    )
}
