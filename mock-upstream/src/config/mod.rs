//! Configuration: raw settings from flags, `MOCK_*` variables and a TOML file, validated into
//! one immutable [`Config`] before the server starts.
//!
//! Precedence: documented defaults, then the `--config` file, then the environment, then flags.
//!
//! These are settings types only: nothing here imports the server's runtime modules.
//!
//! - `raw`: the settings as given, their precedence and their validation.
//! - `api`: the APIs and providers settings, metrics and routes name.
//! - `fault_settings`: `--fault` rates; `rate_limit_settings`: `--rate-limit`;
//!   `context_window`: `--context-window`; `tokenizer`: `--tokenizer`;
//!   `prompt_cache_settings`: `--prompt-cache` and its bounds; `prefill_settings`: the
//!   prefill model and the running bound; `control_settings`: `--name`, `--record` and
//!   `--control`.

mod api;
mod context_window;
mod control_settings;
mod fault_settings;
mod prefill_settings;
mod prompt_cache_settings;
mod rate_limit_settings;
mod raw;
mod tokenizer;

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use gatebench_shared::duration::format_us;
use gatebench_shared::wake::Spin;
use gatebench_shared::{LatencyModel, SpecError};

pub use api::{Api, Provider};
pub use context_window::{ContextWindow, ContextWindowError};
pub use fault_settings::{
    FaultError, FaultKind, FaultRates, StreamFault, StreamFaultKind, CONTENT_FILTER, STATUSES,
};
pub use prefill_settings::{PrefillError, PrefillSettings};
pub use prompt_cache_settings::{PromptCacheError, PromptCacheSettings};
pub use rate_limit_settings::{RateLimit, RateLimitError};
pub use raw::RawSettings;
pub use tokenizer::{Tokenizer, TokenizerError};

/// Most dimensions an embedding vector may have.
pub const MAX_DIMENSIONS: u32 = 8_192;

/// The widest spin window, fixed (`--spin 1ms`) or learned (`--spin auto` is clamped to it).
pub const MAX_SPIN: Duration = Duration::from_millis(1);

/// A setting the mock cannot use. Each message says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid listen address '{0}': expected HOST:PORT, like 127.0.0.1:8080 or [::1]:8080")]
    Listen(String),
    #[error("invalid --threads {0}: expected a whole number from 1 to 1024")]
    Threads(usize),
    #[error(
        "invalid --cores '{0}': expected core ids like 0, 0,1 or 0-3, each below the {1} cores here"
    )]
    Cores(String, usize),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("invalid {0} '{1}': expected a duration like 500ms, 10s or 2m")]
    Duration(&'static str, String),
    #[error(
        "invalid --spin '{0}': expected auto (the default: a margin learned from the timer's own \
         wake-ups), 0 (never spin) or a duration of at most 1ms, like 50us"
    )]
    Spin(String),
    #[error("invalid --http1 '{0}': expected own (the mock's own HTTP/1.1 server) or hyper")]
    Http1(String),
    #[error("invalid --max-body '{0}': expected a size like 16MiB, 512KiB or 1048576")]
    Size(String),
    #[error("invalid --models '{0}': expected a comma-separated list of model names")]
    Models(String),
    #[error(transparent)]
    Fault(#[from] FaultError),
    #[error(transparent)]
    RateLimit(#[from] RateLimitError),
    #[error(transparent)]
    ContextWindow(#[from] ContextWindowError),
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error(transparent)]
    PromptCache(#[from] PromptCacheError),
    #[error(transparent)]
    Prefill(#[from] PrefillError),
    #[error("invalid --tool-calls '{0}': expected a share of requests with tools, like 100%, 25% or 0.5")]
    ToolCalls(String),
    #[error(
        "invalid --tls-names '{0}': expected a comma-separated list of host names or IP addresses"
    )]
    TlsNames(String),
    #[error("invalid --max-connections 0: expected a whole number of connections, at least 1")]
    MaxConnections,
    #[error("invalid --embedding-dimensions {0}: expected a whole number from 1 to 8192")]
    Dimensions(u32),
    #[error("invalid --name '{0}': expected 1 to 128 visible ASCII characters (it is sent as a header value)")]
    Name(String),
    #[error(
        "invalid --record {0}: expected a number of arrivals to keep, from 0 (off) to 1000000"
    )]
    Record(usize),
    #[error("invalid --control '{0}': expected a loopback address like 127.0.0.1:9090 or [::1]:9090 (the control listener changes how the mock answers, so it listens on loopback only)")]
    Control(String),
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid config file {path}: {source}")]
    Parse {
        path: String,
        source: Box<toml::de::Error>,
    },
}
/// The validated configuration of a mock server.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Listen address. Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// Worker threads. Default one per core.
    pub threads: usize,
    /// Cores the workers are pinned to, round-robin. Default: none.
    pub cores: Vec<usize>,
    /// Latency, time to first token, inter-token gap, output length. Default: no latency,
    /// 16 tokens.
    pub latency: LatencyModel,
    /// `--seed`: the seed of every request's draws (latency, faults, tool calls), each in a
    /// stream of its own (`gatebench_shared::seeded`), and of the embeddings (hashed with
    /// their input). Default 0.
    pub seed: u64,
    /// Models listed by `GET /v1/models`. Default `gpt-4o-mini`, `gpt-4o`.
    pub models: Vec<String>,
    /// Largest request body, in bytes. Default 16 MiB.
    pub max_body_bytes: u64,
    /// Time allowed to read a request's headers, and a kept-alive connection's longest idle
    /// time between requests. Default 90 s.
    pub header_timeout: Duration,
    /// Time allowed to read a request's body once its headers are in. Default 30 s.
    pub body_timeout: Duration,
    /// Time sent data may stay unacknowledged before the connection is dropped. Default 60 s.
    pub send_timeout: Duration,
    /// Connections served at once; past it, 503. Default: no cap.
    pub max_connections: Option<usize>,
    /// Time in-flight responses may take to finish after shutdown is asked. Default 5 s.
    pub shutdown_grace: Duration,
    /// How long before each deadline a worker spins instead of sleeping: learned from its own
    /// wake-ups (`auto`), or fixed (at most 1 ms; 0: never). Default `auto`.
    pub spin: Spin,
    /// The server of clear-text HTTP/1.1 connections. Default the mock's own.
    pub http1: Http1Server,
    /// Error statuses and mid-stream faults at seeded rates. Default: none.
    pub faults: FaultRates,
    /// Dimensions of embedding vectors when a request does not ask. Default 1536.
    pub embedding_dimensions: u32,
    /// The API keys (comma-separated) of which every request must carry one. Default: none.
    pub require_api_key: Option<String>,
    /// Requests and tokens per minute per API key. Default: no limit.
    pub rate_limit: RateLimit,
    /// Share of requests with `tools` answered with a tool call. Default 0.
    pub tool_calls: f64,
    /// Context sizes past which requests get the provider's refusal. Default: no limit.
    pub context_window: ContextWindow,
    /// How prompt tokens are counted. Default: the 4-bytes-a-token estimate.
    pub tokenizer: Tokenizer,
    /// The prompt cache, per API key. Default: off.
    pub prompt_cache: PromptCacheSettings,
    /// Prefill time per uncached prompt token, and the bound on running requests. Default: off.
    pub prefill: PrefillSettings,
    /// TLS with a generated certificate. Default: plain HTTP.
    pub tls: Option<TlsSettings>,
    /// Sent on every answer as `x-gatebench-upstream`. Default: none.
    pub name: Option<String>,
    /// Arrivals kept for `GET /v1/gatebench/record`. Default 0: not recorded.
    pub record: usize,
    /// The loopback address of the control listener. Default: none.
    pub control: Option<SocketAddr>,
}

/// `--http1`: which server answers clear-text HTTP/1.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Http1Server {
    /// The mock's own server (`crate::serving::h1`), handing what it does not take to hyper.
    Own,
    /// hyper's server for every connection.
    Hyper,
}

/// `--tls-names` and `--tls-ca-file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// Names (DNS or IP) the certificate is valid for.
    pub names: Vec<String>,
    /// Where the CA's PEM is written.
    pub ca_file: std::path::PathBuf,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            threads: 1,
            cores: Vec::new(),
            latency: LatencyModel::default(),
            seed: 0,
            models: vec!["gpt-4o-mini".to_string(), "gpt-4o".to_string()],
            max_body_bytes: 16 << 20,
            // Longer than the idle time of common client pools (nginx's upstream keepalive 60 s,
            // Node's 4 s, httpx's 5 s): a server that closes an idle pooled connection first
            // races the pool's next request on it, which then fails.
            header_timeout: Duration::from_secs(90),
            body_timeout: Duration::from_secs(30),
            send_timeout: Duration::from_secs(60),
            max_connections: None,
            shutdown_grace: Duration::from_secs(5),
            spin: Spin::Auto,
            http1: Http1Server::Own,
            faults: FaultRates::default(),
            embedding_dimensions: 1536,
            require_api_key: None,
            rate_limit: RateLimit::default(),
            tool_calls: 0.0,
            context_window: ContextWindow::default(),
            tokenizer: Tokenizer::Estimate,
            prompt_cache: PromptCacheSettings::default(),
            prefill: PrefillSettings::default(),
            tls: None,
            name: None,
            record: 0,
            control: None,
        }
    }
}

impl Config {
    /// The configuration for a test or an embedded mock: loopback, an ephemeral port, one thread.
    pub fn loopback() -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..Config::default()
        }
    }

    /// The configuration as TOML, with the API key (if any) replaced: what the mock discloses at
    /// `GET /v1/gatebench/config`.
    pub fn to_toml_redacted(&self) -> String {
        Config {
            require_api_key: self.require_api_key.as_ref().map(|_| "<redacted>".into()),
            ..self.clone()
        }
        .to_toml()
    }

    /// The configuration as TOML that `--config` reads back.
    pub fn to_toml(&self) -> String {
        let m = &self.latency;
        let raw = RawSettings {
            listen: Some(self.listen.to_string()),
            threads: Some(self.threads),
            cores: (!self.cores.is_empty()).then(|| {
                let ids: Vec<String> = self.cores.iter().map(|c| c.to_string()).collect();
                ids.join(",")
            }),
            latency: m.response.map(|d| d.to_string()),
            ttft: Some(m.ttft.to_string()),
            itl: Some(m.itl.to_string()),
            tokens: Some(m.tokens.to_string()),
            seed: Some(self.seed),
            models: Some(self.models.join(",")),
            max_body: Some(self.max_body_bytes.to_string()),
            header_timeout: Some(format_us(self.header_timeout.as_micros() as u64)),
            body_timeout: Some(format_us(self.body_timeout.as_micros() as u64)),
            send_timeout: Some(format_us(self.send_timeout.as_micros() as u64)),
            max_connections: self.max_connections,
            shutdown_grace: Some(format_us(self.shutdown_grace.as_micros() as u64)),
            spin: Some(match self.spin {
                Spin::Auto => "auto".to_string(),
                Spin::Fixed(d) => format_us(d.as_micros() as u64),
            }),
            http1: Some(
                match self.http1 {
                    Http1Server::Own => "own",
                    Http1Server::Hyper => "hyper",
                }
                .to_string(),
            ),
            fault: self.faults.to_settings(),
            embedding_dimensions: Some(self.embedding_dimensions),
            require_api_key: self.require_api_key.clone(),
            rate_limit: self
                .rate_limit
                .is_set()
                .then(|| self.rate_limit.to_setting()),
            tool_calls: Some(format!("{}%", self.tool_calls * 100.0)),
            context_window: self
                .context_window
                .is_set()
                .then(|| self.context_window.to_setting()),
            tokenizer: Some(self.tokenizer.name().to_string()),
            prompt_cache: Some(self.prompt_cache.on_setting().to_string()),
            prompt_cache_ttl: Some(format_us(self.prompt_cache.ttl.as_micros() as u64)),
            prompt_cache_entries: Some(self.prompt_cache.entries),
            prefill_per_token: Some(format_us(self.prefill.per_token.as_micros() as u64)),
            prefill_slowdown: Some(self.prefill.slowdown.to_string()),
            max_running: self.prefill.max_running,
            max_waiting: self.prefill.max_waiting,
            tls_names: self.tls.as_ref().map(|t| t.names.join(",")),
            tls_ca_file: self.tls.as_ref().map(|t| t.ca_file.display().to_string()),
            name: self.name.clone(),
            record: Some(self.record),
            control: self.control.map(|a| a.to_string()),
        };
        // Invariant: a struct of strings and integers always serialises to TOML.
        toml::to_string(&raw).expect("settings serialise")
    }
}

pub(crate) fn parse_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    let err = || ConfigError::Listen(text.to_string());
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    // A name such as localhost:8080: take its first address.
    text.to_socket_addrs()
        .map_err(|_| err())?
        .next()
        .ok_or_else(err)
}

pub(crate) fn parse_models(text: &str) -> Result<Vec<String>, ConfigError> {
    let models: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect();
    if models.is_empty() {
        return Err(ConfigError::Models(text.to_string()));
    }
    Ok(models)
}

/// Parses a share: `25%` or `0.25`, from 0 to 1.
pub(crate) fn parse_share(text: &str) -> Option<f64> {
    let t = text.trim();
    let share = match t.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().ok()? / 100.0,
        None => t.parse::<f64>().ok()?,
    };
    (0.0..=1.0).contains(&share).then_some(share)
}

/// Parses `1048576`, `512KiB`, `16MiB`, `1GiB` (and `k`, `M`, `G` as powers of 1024).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: u64 = number.parse().ok()?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "k" | "K" | "KiB" | "KB" => 10,
        "M" | "MiB" | "MB" => 20,
        "G" | "GiB" | "GB" => 30,
        _ => return None,
    };
    number.checked_mul(1 << shift).filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatebench_shared::{Distribution, TokenCount};

    #[test]
    fn defaults_are_documented_values() {
        let config = RawSettings::default().validate().unwrap();
        assert_eq!(config.listen, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(config.max_body_bytes, 16 << 20);
        assert!(config.latency.is_instant());
        assert!(config.threads >= 1);
    }

    #[test]
    fn flags_win_over_the_file() {
        let file: RawSettings = toml::from_str(
            "listen = \"127.0.0.1:9000\"\ntokens = 60\nitl = \"10ms\"\nmax-body = 1024\n",
        )
        .unwrap();
        let flags = RawSettings {
            listen: Some("127.0.0.1:9001".into()),
            ..RawSettings::default()
        };
        let config = flags.over(file).validate().unwrap();
        assert_eq!(config.listen.port(), 9001);
        assert_eq!(config.latency.tokens, TokenCount::Fixed(60));
        assert_eq!(config.latency.itl, Distribution::Fixed { us: 10_000 });
        assert_eq!(config.max_body_bytes, 1024);
    }

    /// The key `pin`: the cores' former name, still read.
    #[test]
    fn the_cores_former_key_is_still_read() {
        let file: RawSettings = toml::from_str("pin = \"0\"\n").unwrap();
        assert_eq!(file.cores.as_deref(), Some("0"));
        assert_eq!(file.validate().unwrap().cores, vec![0]);
    }

    #[test]
    fn printed_config_reads_back_the_same() {
        let raw = RawSettings {
            cores: Some("0".into()),
            ttft: Some("lognormal:50ms,0.5".into()),
            tokens: Some("uniform:5..9".into()),
            seed: Some(3),
            header_timeout: Some("1500ms".into()),
            spin: Some("40us".into()),
            http1: Some("hyper".into()),
            fault: vec!["messages:529:1%".into(), "chat:reset@5:0.5%".into()],
            rate_limit: Some("rpm=60,tpm=40000".into()),
            tool_calls: Some("25%".into()),
            tls_names: Some("api.openai.com,127.0.0.1".into()),
            tls_ca_file: Some("/tmp/ca.pem".into()),
            name: Some("upstream-a".into()),
            record: Some(1000),
            control: Some("127.0.0.1:9090".into()),
            ..RawSettings::default()
        };
        let config = raw.validate().unwrap();
        let again: RawSettings = toml::from_str(&config.to_toml()).unwrap();
        assert_eq!(again.validate().unwrap(), config);
    }

    #[test]
    fn bad_settings_say_what_was_expected() {
        let cases = [
            (
                RawSettings {
                    listen: Some("nowhere".into()),
                    ..Default::default()
                },
                "expected HOST:PORT",
            ),
            (
                RawSettings {
                    cores: Some("0-99999".into()),
                    ..Default::default()
                },
                "expected core ids",
            ),
            (
                RawSettings {
                    itl: Some("10 parsecs".into()),
                    ..Default::default()
                },
                "expected a duration",
            ),
            (
                RawSettings {
                    max_body: Some("lots".into()),
                    ..Default::default()
                },
                "expected a size",
            ),
            (
                RawSettings {
                    spin: Some("5ms".into()),
                    ..Default::default()
                },
                "at most 1ms",
            ),
            (
                RawSettings {
                    spin: Some("soon".into()),
                    ..Default::default()
                },
                "expected auto",
            ),
            (
                RawSettings {
                    http1: Some("nginx".into()),
                    ..Default::default()
                },
                "expected own",
            ),
            (
                RawSettings {
                    threads: Some(0),
                    ..Default::default()
                },
                "from 1 to 1024",
            ),
            (
                RawSettings {
                    rate_limit: Some("rps=3".into()),
                    ..Default::default()
                },
                "expected rpm=N",
            ),
            (
                RawSettings {
                    tool_calls: Some("150%".into()),
                    ..Default::default()
                },
                "share of requests",
            ),
            (
                RawSettings {
                    tls_names: Some(" , ".into()),
                    ..Default::default()
                },
                "host names",
            ),
            (
                RawSettings {
                    fault: vec!["images:429:1%".into()],
                    ..Default::default()
                },
                "[ROUTE:]FAULT:RATE",
            ),
            (
                RawSettings {
                    control: Some("0.0.0.0:9090".into()),
                    ..Default::default()
                },
                "expected a loopback address",
            ),
            (
                RawSettings {
                    name: Some("a b\n".into()),
                    ..Default::default()
                },
                "visible ASCII",
            ),
        ];
        for (raw, expected) in cases {
            let err = raw.validate().unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
        assert!(toml::from_str::<RawSettings>("colour = \"red\"").is_err());
    }

    #[test]
    fn spin_is_auto_by_default_and_takes_auto_zero_or_a_duration() {
        let spin = |text: Option<&str>| {
            RawSettings {
                spin: text.map(str::to_string),
                ..RawSettings::default()
            }
            .validate()
            .map(|c| c.spin)
        };
        assert_eq!(spin(None).unwrap(), Spin::Auto);
        assert_eq!(spin(Some("auto")).unwrap(), Spin::Auto);
        assert_eq!(spin(Some("AUTO")).unwrap(), Spin::Auto);
        assert_eq!(spin(Some("0")).unwrap(), Spin::Fixed(Duration::ZERO));
        assert_eq!(
            spin(Some("50us")).unwrap(),
            Spin::Fixed(Duration::from_micros(50))
        );
        assert_eq!(spin(Some("1ms")).unwrap(), Spin::Fixed(MAX_SPIN));
        for over in ["1001us", "2ms", "1s"] {
            let err = spin(Some(over)).unwrap_err().to_string();
            assert!(err.contains("at most 1ms") && err.contains("auto"), "{err}");
        }
        // The file and the disclosure say `auto`, and read back.
        let file: RawSettings = toml::from_str("spin = \"auto\"\n").unwrap();
        assert_eq!(file.validate().unwrap().spin, Spin::Auto);
        assert!(Config::default().to_toml().contains("spin = \"auto\""));
        let fixed = Config {
            spin: Spin::Fixed(Duration::from_micros(50)),
            ..Config::default()
        };
        assert!(fixed.to_toml().contains("spin = \"50us\""));
    }

    #[test]
    fn sizes_and_cores_parse() {
        assert_eq!(parse_size("16MiB"), Some(16 << 20));
        assert_eq!(parse_size("512KiB"), Some(512 << 10));
        assert_eq!(parse_size("0"), None);
    }

    #[test]
    fn idle_pooled_connections_outlive_common_pool_idle_times() {
        // hyper closes a kept-alive connection idle for the header timeout; nginx keeps idle
        // upstream connections 60 s by default. Closing first would race its requests.
        assert!(Config::default().header_timeout > Duration::from_secs(60));
    }
}
