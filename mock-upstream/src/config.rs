//! Configuration: raw settings from flags, `MOCK_*` variables and a TOML file, validated into
//! one immutable [`Config`] before the server starts.
//!
//! Precedence: documented defaults, then the `--config` file, then the environment, then flags.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use clap::Args;
use gatebench_shared::latency::{format_us, parse_duration_us};
use gatebench_shared::{Distribution, LatencyModel, SpecError, TokenCount};
use serde::{Deserialize, Serialize};

use crate::faults::{FaultError, FaultRates};
use crate::ratelimit::{RateLimit, RateLimitError};

/// A setting the mock cannot use. Each message says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid listen address '{0}': expected HOST:PORT, like 127.0.0.1:8080 or [::1]:8080")]
    Listen(String),
    #[error("invalid --threads {0}: expected a whole number from 1 to 1024")]
    Threads(usize),
    #[error(
        "invalid --pin '{0}': expected core ids like 0, 0,1 or 0-3, each below the {1} cores here"
    )]
    Pin(String, usize),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("invalid {0} '{1}': expected a duration like 500ms, 10s or 2m")]
    Duration(&'static str, String),
    #[error("invalid --spin '{0}': expected a duration of at most 1ms, like 20us or 0")]
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

/// Settings as given, before validation. Each field is a flag, a `MOCK_*` variable and a key of
/// the TOML file (kebab-case, like the flag).
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSettings {
    /// Address to listen on. Default 127.0.0.1:8080; use 0.0.0.0:PORT to accept other hosts.
    #[arg(long, env = "MOCK_LISTEN")]
    pub listen: Option<String>,
    /// Worker threads, each with its own runtime and SO_REUSEPORT listener. Default: one per
    /// core (or one per --pin entry).
    #[arg(long, env = "MOCK_THREADS")]
    pub threads: Option<usize>,
    /// Cores to pin worker threads to, like 0 or 0,1 or 0-3. Default: not pinned.
    #[arg(long, env = "MOCK_PIN")]
    pub pin: Option<String>,
    /// Time to a whole non-streaming response (a distribution). Default: the stream's e2e,
    /// ttft + itl x (tokens - 1).
    #[arg(long, env = "MOCK_LATENCY")]
    pub latency: Option<String>,
    /// Time to first token of a stream, like 0, 200ms, uniform:100ms..300ms,
    /// normal:200ms,50ms, lognormal:200ms,0.5. Default 0.
    #[arg(long, env = "MOCK_TTFT")]
    pub ttft: Option<String>,
    /// Gap between stream tokens (a distribution like --ttft). Default 0.
    #[arg(long, env = "MOCK_ITL")]
    pub itl: Option<String>,
    /// Output tokens per response, like 16 or uniform:10..100; a request's max_tokens caps it.
    /// Default 16.
    #[arg(long, env = "MOCK_TOKENS")]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub tokens: Option<String>,
    /// Seed of every latency and length draw. Default 0.
    #[arg(long, env = "MOCK_SEED")]
    pub seed: Option<u64>,
    /// Models listed by GET /v1/models (any model name is accepted and echoed).
    /// Default gpt-4o-mini,gpt-4o.
    #[arg(long, env = "MOCK_MODELS")]
    pub models: Option<String>,
    /// Largest request body accepted; larger ones get 413. Default 16MiB.
    #[arg(long, env = "MOCK_MAX_BODY")]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub max_body: Option<String>,
    /// Time a client has to send a request's headers before the connection is closed; also
    /// the longest a kept-alive connection may sit idle between requests (hyper times both
    /// with one timer), so it must outlast the idle time of a gateway's connection pool, or
    /// the pool's requests race the close. Default 90s.
    #[arg(long, env = "MOCK_HEADER_TIMEOUT")]
    pub header_timeout: Option<String>,
    /// Time a client has to send a request's body once its headers are in (a slow body, or
    /// one shorter than its content-length); past it, 408 and the connection closes.
    /// Default 30s.
    #[arg(long, env = "MOCK_BODY_TIMEOUT")]
    pub body_timeout: Option<String>,
    /// Time sent data may stay unacknowledged, as when a client stops reading a stream or
    /// vanishes, before the connection is dropped (the socket's TCP_USER_TIMEOUT).
    /// Default 60s.
    #[arg(long, env = "MOCK_SEND_TIMEOUT")]
    pub send_timeout: Option<String>,
    /// Connections served at once; each connection past it gets 503 in the provider's shape
    /// for its request and is closed. Default: no cap but the open-file limit.
    #[arg(long, env = "MOCK_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// On SIGINT/SIGTERM, how long in-flight responses may take to finish. Default 5s.
    #[arg(long, env = "MOCK_SHUTDOWN_GRACE")]
    pub shutdown_grace: Option<String>,
    /// Spin (yielding to the worker's other work) for the last SPIN before each deadline of a
    /// delayed answer or stream event instead of leaving it to the kernel's wake-up: an
    /// emission error of a microsecond or two instead of tens, for up to SPIN of CPU per
    /// deadline. For paired, low-rate measurements. At most 1ms. Default 0 (no spin).
    #[arg(long, env = "MOCK_SPIN")]
    pub spin: Option<String>,
    /// Which server answers clear-text HTTP/1.1: `own`, the mock's own (httparse, one write
    /// per answer; what it does not take, such as HTTP/1.0 or chunked request bodies, it hands
    /// to hyper), or `hyper` for every connection. Default own.
    #[arg(long, env = "MOCK_HTTP1")]
    pub http1: Option<String>,
    /// A fault at a seeded rate, [ROUTE:]FAULT:RATE like 429:2%, messages:529:1% or
    /// chat:reset@5:0.5% (repeatable; MOCK_FAULT takes a comma-separated list). FAULT is an
    /// error status, answered in the route's provider shape, or a mid-stream fault
    /// (error|close|truncate|stall|reset@EVENT) for streams.
    #[arg(long = "fault", env = "MOCK_FAULT", value_delimiter = ',')]
    #[serde(default)]
    pub fault: Vec<String>,
    /// Dimensions of /v1/embeddings vectors when the request does not ask. Default 1536.
    #[arg(long, env = "MOCK_EMBEDDING_DIMENSIONS")]
    pub embedding_dimensions: Option<u32>,
    /// Answer 401 in the provider's shape unless a request carries one of these keys
    /// (KEY[,KEY...]; OpenAI routes: Authorization: Bearer KEY; Anthropic: x-api-key).
    /// Default: no key needed.
    #[arg(long, env = "MOCK_REQUIRE_API_KEY")]
    pub require_api_key: Option<String>,
    /// A token bucket per API key, rpm=N,tpm=N (either or both): requests and tokens per
    /// minute, refilled continuously; past it, the provider's 429. Default: no limit.
    #[arg(long, env = "MOCK_RATE_LIMIT")]
    pub rate_limit: Option<String>,
    /// Share of requests carrying `tools` that are answered with a call of the first tool
    /// (seeded per request), like 100% or 25%. Default 0: tools are ignored.
    #[arg(long, env = "MOCK_TOOL_CALLS")]
    pub tool_calls: Option<String>,
    /// Serve TLS (HTTP/1.1 and HTTP/2 by ALPN) with a certificate generated at start for these
    /// names, like api.openai.com,localhost. Default: plain HTTP (HTTP/1.1 and h2c).
    #[arg(long, env = "MOCK_TLS_NAMES")]
    pub tls_names: Option<String>,
    /// With --tls-names: where to write the PEM of the CA that signed the certificate, for
    /// clients to trust. Default: mock-ca.pem in the working directory.
    #[arg(long, env = "MOCK_TLS_CA_FILE")]
    pub tls_ca_file: Option<String>,
}

impl RawSettings {
    /// Reads a TOML config file.
    pub fn from_file(path: &Path) -> Result<RawSettings, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.display().to_string(),
            source: Box::new(source),
        })
    }

    /// Settings from `self` (flags and environment) win over those of `file`.
    pub fn over(self, file: RawSettings) -> RawSettings {
        RawSettings {
            listen: self.listen.or(file.listen),
            threads: self.threads.or(file.threads),
            pin: self.pin.or(file.pin),
            latency: self.latency.or(file.latency),
            ttft: self.ttft.or(file.ttft),
            itl: self.itl.or(file.itl),
            tokens: self.tokens.or(file.tokens),
            seed: self.seed.or(file.seed),
            models: self.models.or(file.models),
            max_body: self.max_body.or(file.max_body),
            header_timeout: self.header_timeout.or(file.header_timeout),
            body_timeout: self.body_timeout.or(file.body_timeout),
            send_timeout: self.send_timeout.or(file.send_timeout),
            max_connections: self.max_connections.or(file.max_connections),
            shutdown_grace: self.shutdown_grace.or(file.shutdown_grace),
            spin: self.spin.or(file.spin),
            http1: self.http1.or(file.http1),
            embedding_dimensions: self.embedding_dimensions.or(file.embedding_dimensions),
            require_api_key: self.require_api_key.or(file.require_api_key),
            rate_limit: self.rate_limit.or(file.rate_limit),
            tool_calls: self.tool_calls.or(file.tool_calls),
            tls_names: self.tls_names.or(file.tls_names),
            tls_ca_file: self.tls_ca_file.or(file.tls_ca_file),
            fault: if self.fault.is_empty() {
                file.fault
            } else {
                self.fault
            },
        }
    }

    /// Validates every setting, filling in defaults.
    pub fn validate(self) -> Result<Config, ConfigError> {
        let defaults = Config::default();
        let listen = match self.listen {
            Some(text) => parse_listen(&text)?,
            None => defaults.listen,
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pin = match self.pin {
            Some(text) => gatebench_shared::host::parse_cores(&text, cores)
                .ok_or_else(|| ConfigError::Pin(text.clone(), cores))?,
            None => Vec::new(),
        };
        let threads = self
            .threads
            .unwrap_or(if pin.is_empty() { cores } else { pin.len() });
        if !(1..=1024).contains(&threads) {
            return Err(ConfigError::Threads(threads));
        }
        let dist = |v: Option<String>| v.map(|s| s.parse::<Distribution>()).transpose();
        let latency = LatencyModel {
            latency: dist(self.latency)?,
            ttft: dist(self.ttft)?.unwrap_or(Distribution::ZERO),
            itl: dist(self.itl)?.unwrap_or(Distribution::ZERO),
            tokens: match self.tokens {
                Some(t) => t.parse::<TokenCount>()?,
                None => defaults.latency.tokens,
            },
            seed: self.seed.unwrap_or(0),
        };
        let models = match self.models {
            Some(text) => parse_models(&text)?,
            None => defaults.models,
        };
        let max_body_bytes = match self.max_body {
            Some(text) => parse_size(&text).ok_or(ConfigError::Size(text))?,
            None => defaults.max_body_bytes,
        };
        let duration = |name: &'static str, v: Option<String>, default: Duration| match v {
            Some(text) => parse_duration_us(&text)
                .map(Duration::from_micros)
                .ok_or(ConfigError::Duration(name, text)),
            None => Ok(default),
        };
        let faults = FaultRates::parse(&self.fault)?;
        let embedding_dimensions = self
            .embedding_dimensions
            .unwrap_or(defaults.embedding_dimensions);
        if !(1..=crate::embeddings::MAX_DIMENSIONS).contains(&embedding_dimensions) {
            return Err(ConfigError::Dimensions(embedding_dimensions));
        }
        let rate_limit = RateLimit::parse(self.rate_limit.as_deref().unwrap_or(""))?;
        let tool_calls = match self.tool_calls {
            Some(text) => parse_share(&text).ok_or(ConfigError::ToolCalls(text))?,
            None => defaults.tool_calls,
        };
        let tls = match self.tls_names {
            Some(text) => {
                let names: Vec<String> = text
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect();
                if names.is_empty() || names.iter().any(|n| n.contains(char::is_whitespace)) {
                    return Err(ConfigError::TlsNames(text));
                }
                Some(TlsSettings {
                    names,
                    ca_file: self
                        .tls_ca_file
                        .unwrap_or_else(|| "mock-ca.pem".to_string())
                        .into(),
                })
            }
            None => None,
        };
        Ok(Config {
            listen,
            threads,
            pin,
            faults,
            rate_limit,
            tool_calls,
            tls,
            embedding_dimensions,
            require_api_key: self.require_api_key.filter(|k| !k.is_empty()),
            latency,
            models,
            max_body_bytes,
            header_timeout: duration(
                "--header-timeout",
                self.header_timeout,
                defaults.header_timeout,
            )?,
            body_timeout: duration("--body-timeout", self.body_timeout, defaults.body_timeout)?,
            send_timeout: duration("--send-timeout", self.send_timeout, defaults.send_timeout)?,
            max_connections: match self.max_connections {
                Some(0) => return Err(ConfigError::MaxConnections),
                cap => cap,
            },
            shutdown_grace: duration(
                "--shutdown-grace",
                self.shutdown_grace,
                defaults.shutdown_grace,
            )?,
            spin: match self.spin {
                Some(text) => match parse_duration_us(&text) {
                    Some(us) if us <= 1_000 => Duration::from_micros(us),
                    _ => return Err(ConfigError::Spin(text)),
                },
                None => defaults.spin,
            },
            http1: match self.http1.as_deref() {
                None => defaults.http1,
                Some("own") => Http1Server::Own,
                Some("hyper") => Http1Server::Hyper,
                Some(other) => return Err(ConfigError::Http1(other.to_string())),
            },
        })
    }
}

/// The validated configuration of a mock server.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Listen address. Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// Worker threads. Default one per core.
    pub threads: usize,
    /// Cores the workers are pinned to, round-robin. Default: none.
    pub pin: Vec<usize>,
    /// Latency, time to first token, inter-token gap, output length, seed. Default: no latency,
    /// 16 tokens, seed 0.
    pub latency: LatencyModel,
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
    /// How long before each deadline a worker spins instead of sleeping. Default 0 (never).
    pub spin: Duration,
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
    /// TLS with a generated certificate. Default: plain HTTP.
    pub tls: Option<TlsSettings>,
}

/// `--http1`: which server answers clear-text HTTP/1.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Http1Server {
    /// The mock's own server (`crate::h1`), handing what it does not take to hyper.
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
            pin: Vec::new(),
            latency: LatencyModel::default(),
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
            spin: Duration::ZERO,
            http1: Http1Server::Own,
            faults: FaultRates::default(),
            embedding_dimensions: 1536,
            require_api_key: None,
            rate_limit: RateLimit::default(),
            tool_calls: 0.0,
            tls: None,
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
            pin: (!self.pin.is_empty()).then(|| {
                let ids: Vec<String> = self.pin.iter().map(|c| c.to_string()).collect();
                ids.join(",")
            }),
            latency: m.latency.map(|d| d.to_string()),
            ttft: Some(m.ttft.to_string()),
            itl: Some(m.itl.to_string()),
            tokens: Some(m.tokens.to_string()),
            seed: Some(m.seed),
            models: Some(self.models.join(",")),
            max_body: Some(self.max_body_bytes.to_string()),
            header_timeout: Some(format_us(self.header_timeout.as_micros() as u64)),
            body_timeout: Some(format_us(self.body_timeout.as_micros() as u64)),
            send_timeout: Some(format_us(self.send_timeout.as_micros() as u64)),
            max_connections: self.max_connections,
            shutdown_grace: Some(format_us(self.shutdown_grace.as_micros() as u64)),
            spin: Some(format_us(self.spin.as_micros() as u64)),
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
            tls_names: self.tls.as_ref().map(|t| t.names.join(",")),
            tls_ca_file: self.tls.as_ref().map(|t| t.ca_file.display().to_string()),
        };
        // Invariant: a struct of strings and integers always serialises to TOML.
        toml::to_string(&raw).expect("settings serialise")
    }
}

fn parse_listen(text: &str) -> Result<SocketAddr, ConfigError> {
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

fn parse_models(text: &str) -> Result<Vec<String>, ConfigError> {
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
fn parse_share(text: &str) -> Option<f64> {
    let t = text.trim();
    let share = match t.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().ok()? / 100.0,
        None => t.parse::<f64>().ok()?,
    };
    (0.0..=1.0).contains(&share).then_some(share)
}

/// Parses `1048576`, `512KiB`, `16MiB`, `1GiB` (and `k`, `M`, `G` as powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
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

    #[test]
    fn printed_config_reads_back_the_same() {
        let raw = RawSettings {
            pin: Some("0".into()),
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
                    pin: Some("0-99999".into()),
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
        ];
        for (raw, expected) in cases {
            let err = raw.validate().unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
        assert!(toml::from_str::<RawSettings>("colour = \"red\"").is_err());
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
