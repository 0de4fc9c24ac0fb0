//! The `mock-upstream` command line.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;

use crate::config::{Config, RawSettings};
use crate::serving::server::MockServer;

/// A deterministic mock LLM provider (OpenAI, Anthropic) that is never the bottleneck.
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
    #[command(subcommand)]
    pub command: Option<Subcommand>,
}

/// Reads the environment's former names as their new ones, before the command line is parsed:
/// `MOCK_PIN` names the cores (`MOCK_CORES`) when that is not set. Called first, while the
/// process has one thread.
pub fn former_environment() {
    gatebench_shared::settings::read_former_names(&[("MOCK_PIN", "MOCK_CORES")]);
}

/// What to do instead of serving.
#[derive(Debug, clap::Subcommand)]
pub enum Subcommand {
    /// Ask a running mock's GET /health (found from the same settings: MOCK_LISTEN, the config
    /// file, TLS) and exit 0 when it answers 200, 1 otherwise. For a container HEALTHCHECK.
    Healthcheck {
        /// Time allowed for the whole check, like 2s.
        #[arg(long, default_value = "2s")]
        timeout: String,
    },
}

/// Runs the mock until SIGINT or SIGTERM (exit code 0), or the health check (0 or 1).
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    let file = match &cli.config {
        Some(path) => RawSettings::from_file(path)?,
        None => RawSettings::default(),
    };
    let config = cli.settings.over(file).validate()?;
    if cli.print_config {
        print!("{}", config.to_toml());
        return Ok(0);
    }
    if let Some(Subcommand::Healthcheck { timeout }) = &cli.command {
        return healthcheck(&config, timeout);
    }
    let threads = config.threads;
    let tls = config.tls.clone();
    // Every open stream is a descriptor: raise the soft limit before accepting any.
    let files = gatebench_shared::host::raise_open_file_limit()
        .map(|l| format!("open files {}/{}", l.soft, l.hard))
        .unwrap_or_else(|e| format!("open-file limit unknown: {e}"));
    // The signals are watched before the port opens, so a SIGTERM sent as soon as the server
    // answers is a clean shutdown, not the default action (death by the signal).
    let signals = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot build the signal runtime")?;
    let stop = {
        let _entered = signals.enter();
        Signals::watch()?
    };
    let server = MockServer::start(config)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    gatebench_shared::say!(
        "mock-upstream {} listening on {scheme}://{} (HTTP/1.1 and HTTP/2; {threads} threads, {files})",
        env!("CARGO_PKG_VERSION"),
        server.local_addr()
    );
    if let Some(control) = server.control_addr() {
        gatebench_shared::say!("mock-upstream: control listener on http://{control}");
    }
    if let Some(tls) = &tls {
        gatebench_shared::say!(
            "mock-upstream: TLS certificate for {} signed by the CA in {} (trust that file)",
            tls.names.join(", "),
            tls.ca_file.display()
        );
    }
    signals.block_on(stop.first());
    gatebench_shared::say!("mock-upstream: shutting down");
    let summary = emission_summary(&server);
    server.shutdown();
    gatebench_shared::say!("{summary}");
    Ok(0)
}

/// `mock-upstream healthcheck`: 0 when the server configured by `config` answers within
/// `timeout` (a duration like 2s), else 1.
fn healthcheck(config: &Config, timeout: &str) -> anyhow::Result<u8> {
    let timeout = gatebench_shared::duration::parse_us(timeout)
        .filter(|us| *us > 0)
        .map(std::time::Duration::from_micros)
        .with_context(|| format!("invalid --timeout '{timeout}': expected a duration like 2s"))?;
    Ok(
        match crate::observability::healthcheck::check(config, timeout) {
            Ok(()) => {
                println!("healthy");
                0
            }
            Err(unhealthy) => {
                gatebench_shared::say!("mock-upstream healthcheck: {unhealthy}");
                1
            }
        },
    )
}

/// SIGINT and SIGTERM, registered with the kernel from the moment they are watched.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Needs a Tokio runtime entered.
    fn watch() -> anyhow::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt()).context("cannot watch SIGINT")?,
            terminate: signal(SignalKind::terminate()).context("cannot watch SIGTERM")?,
        })
    }

    async fn first(mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

fn emission_summary(server: &MockServer) -> String {
    let m = server.metrics();
    let e = &m.emission_error;
    let timer = m
        .timer()
        .map(|r| format!("; {}", crate::timing::timer::summary(&r)))
        .unwrap_or_default();
    format!(
        "mock-upstream: {} connections; emission error over {} timed events: \
         p50 {}us p99 {}us max {}us{timer}",
        m.connections_opened(),
        e.count(),
        e.quantile_us(0.5),
        e.quantile_us(0.99),
        e.max_us()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--pin`: the cores' former flag, still read (`MOCK_PIN` is read by
    /// [`former_environment`] before parsing).
    #[test]
    fn the_cores_former_flag_is_still_read() {
        let cli = Cli::try_parse_from(["mock-upstream", "--pin", "0"]).unwrap();
        assert_eq!(cli.settings.cores.as_deref(), Some("0"));
    }
}
