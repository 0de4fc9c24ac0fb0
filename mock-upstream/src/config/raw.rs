//! Settings as given (flags, `MOCK_*` variables, the TOML file), merged in order of precedence
//! and validated into a [`Config`].

use std::path::Path;
use std::time::Duration;

use clap::Args;
use gatebench_shared::duration::parse_us;
use gatebench_shared::wake::Spin;
use gatebench_shared::{Distribution, LatencyModel, TokenCount};
use serde::{Deserialize, Serialize};

use super::{
    parse_listen, parse_models, parse_share, parse_size, Config, ConfigError, ContextWindow,
    FaultRates, Http1Server, PrefillSettings, PromptCacheSettings, RateLimit, TlsSettings,
    Tokenizer, MAX_DIMENSIONS, MAX_SPIN,
};

/// Settings as given, before validation. Each field is a flag, a `MOCK_*` variable and a key of
/// the TOML file (kebab-case, like the flag).
#[derive(Debug, Clone, Default, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSettings {
    /// Address to listen on. Default 127.0.0.1:8080; use 0.0.0.0:PORT to accept other hosts.
    #[arg(long, env = "MOCK_LISTEN")]
    pub listen: Option<String>,
    /// Worker threads, each with its own runtime and SO_REUSEPORT listener. Default: one per
    /// core (or one per --cores entry).
    #[arg(long, env = "MOCK_THREADS")]
    pub threads: Option<usize>,
    /// Cores to pin worker threads to, like 0 or 0,1 or 0-3. Default: not pinned. `--pin`,
    /// `MOCK_PIN` and the key `pin`, its former names, are still read.
    #[arg(long, alias = "pin", env = "MOCK_CORES")]
    #[serde(alias = "pin")]
    pub cores: Option<String>,
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
    /// Seed of every request's draws (latency and length, faults, tool calls: each in a stream
    /// of its own) and of the embeddings. Default 0.
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
    /// deadline. auto: a margin learned from the timer's own wake-ups (a high quantile of their
    /// lateness, at most 1ms); 0: never spin; or a fixed duration of at most 1ms. Default auto.
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
    /// Context size in tokens, for every model (128000), per model
    /// (gpt-4o=128000,claude-3-5-haiku=200000) or both: a request whose prompt (and output
    /// cap) exceeds it gets the provider's refusal (OpenAI's context_length_exceeded).
    /// Default: no limit.
    #[arg(long, env = "MOCK_CONTEXT_WINDOW")]
    pub context_window: Option<String>,
    /// How prompt tokens are counted: estimate (4 bytes a token plus each API's framing, free),
    /// cl100k or o200k (OpenAI's BPE, exact, tens of microseconds a request). Default estimate.
    #[arg(long, env = "MOCK_TOKENIZER")]
    pub tokenizer: Option<String>,
    /// A prompt cache per API key, as each provider reports one (on|off): prompts whose
    /// prefix was seen within its TTL report cached tokens where the API does. Default off.
    #[arg(long, env = "MOCK_PROMPT_CACHE")]
    pub prompt_cache: Option<String>,
    /// How long an automatic cache entry (OpenAI, Gemini) lives unused. Default 5m.
    #[arg(long, env = "MOCK_PROMPT_CACHE_TTL")]
    pub prompt_cache_ttl: Option<String>,
    /// Entries the prompt cache keeps across every key; past it, the least recently used
    /// goes. Default 100000.
    #[arg(long, env = "MOCK_PROMPT_CACHE_ENTRIES")]
    pub prompt_cache_entries: Option<usize>,
    /// Prefill time per uncached prompt token, added to the time to first token (and to a
    /// whole answer's time), like 100us. Default 0: off.
    #[arg(long, env = "MOCK_PREFILL_PER_TOKEN")]
    pub prefill_per_token: Option<String>,
    /// The factor on the prefill time when --max-running requests run (1 at one, in
    /// proportion between), like 2. Default 1.
    #[arg(long, env = "MOCK_PREFILL_SLOWDOWN")]
    #[serde(
        default,
        deserialize_with = "gatebench_shared::settings::text_or_number"
    )]
    pub prefill_slowdown: Option<String>,
    /// Requests running at once; past it, a request waits for a slot. Default: no bound.
    #[arg(long, env = "MOCK_MAX_RUNNING")]
    pub max_running: Option<usize>,
    /// Requests waiting for a running slot; past it, 429 in the provider's shape.
    /// Default: no bound.
    #[arg(long, env = "MOCK_MAX_WAITING")]
    pub max_waiting: Option<usize>,
    /// Serve TLS (HTTP/1.1 and HTTP/2 by ALPN) with a certificate generated at start for these
    /// names, like api.openai.com,localhost. Default: plain HTTP (HTTP/1.1 and h2c).
    #[arg(long, env = "MOCK_TLS_NAMES")]
    pub tls_names: Option<String>,
    /// With --tls-names: where to write the PEM of the CA that signed the certificate, for
    /// clients to trust. Default: mock-ca.pem in the working directory.
    #[arg(long, env = "MOCK_TLS_CA_FILE")]
    pub tls_ca_file: Option<String>,
    /// A name for this mock, sent on every answer as `x-gatebench-upstream: NAME` (a gateway's
    /// upstreams told apart by what they answer). Default: none.
    #[arg(long, env = "MOCK_NAME")]
    pub name: Option<String>,
    /// Keep the last N arrivals on the API routes (time, x-gatebench-seq, user, key hash,
    /// route, status) and counts by status per second, served at GET /v1/gatebench/record.
    /// Default 0: off.
    #[arg(long, env = "MOCK_RECORD")]
    pub record: Option<usize>,
    /// A second listener, on a loopback address like 127.0.0.1:9090, that serves
    /// /v1/gatebench/control (steering faults, latency and refusals during a run) and
    /// /v1/gatebench/record. Default: none.
    #[arg(long, env = "MOCK_CONTROL")]
    pub control: Option<String>,
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
            cores: self.cores.or(file.cores),
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
            context_window: self.context_window.or(file.context_window),
            tokenizer: self.tokenizer.or(file.tokenizer),
            prompt_cache: self.prompt_cache.or(file.prompt_cache),
            prompt_cache_ttl: self.prompt_cache_ttl.or(file.prompt_cache_ttl),
            prompt_cache_entries: self.prompt_cache_entries.or(file.prompt_cache_entries),
            prefill_per_token: self.prefill_per_token.or(file.prefill_per_token),
            prefill_slowdown: self.prefill_slowdown.or(file.prefill_slowdown),
            max_running: self.max_running.or(file.max_running),
            max_waiting: self.max_waiting.or(file.max_waiting),
            tls_names: self.tls_names.or(file.tls_names),
            tls_ca_file: self.tls_ca_file.or(file.tls_ca_file),
            name: self.name.or(file.name),
            record: self.record.or(file.record),
            control: self.control.or(file.control),
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
        let listen = given(self.listen, |t| parse_listen(&t), defaults.listen)?;
        let (threads, cores) = workers(self.threads, self.cores)?;
        let latency = latency_model(self.latency, self.ttft, self.itl, self.tokens)?;
        let models = given(self.models, |t| parse_models(&t), defaults.models)?;
        let size = |t: String| parse_size(&t).ok_or(ConfigError::Size(t));
        let max_body_bytes = given(self.max_body, size, defaults.max_body_bytes)?;
        let faults = FaultRates::parse(&self.fault)?;
        let embedding_dimensions =
            dimensions(self.embedding_dimensions, defaults.embedding_dimensions)?;
        let rate_limit = RateLimit::parse(self.rate_limit.as_deref().unwrap_or(""))?;
        let share = |t: String| parse_share(&t).ok_or(ConfigError::ToolCalls(t));
        let tool_calls = given(self.tool_calls, share, defaults.tool_calls)?;
        let context_window = ContextWindow::parse(self.context_window.as_deref().unwrap_or(""))?;
        let tokenizer = given(self.tokenizer, |t| Tokenizer::parse(&t), defaults.tokenizer)?;
        let tls = tls(self.tls_names, self.tls_ca_file)?;
        let prompt_cache = PromptCacheSettings::parse(
            self.prompt_cache.as_deref(),
            self.prompt_cache_ttl.as_deref(),
            self.prompt_cache_entries,
        )?;
        let prefill = PrefillSettings::parse(
            self.prefill_per_token.as_deref(),
            self.prefill_slowdown.as_deref(),
            self.max_running,
            self.max_waiting,
        )?;
        let name = super::control_settings::name(self.name)?;
        let record = super::control_settings::record(self.record)?;
        let control = super::control_settings::control(self.control.as_deref())?;
        Ok(Config {
            name,
            record,
            control,
            prefill,
            prompt_cache,
            context_window,
            tokenizer,
            listen,
            threads,
            cores,
            faults,
            rate_limit,
            tool_calls,
            tls,
            embedding_dimensions,
            require_api_key: self.require_api_key.filter(|k| !k.is_empty()),
            latency,
            seed: self.seed.unwrap_or(0),
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
            spin: spin(self.spin, defaults.spin)?,
            http1: http1(self.http1.as_deref(), defaults.http1)?,
        })
    }
}

/// A setting parsed by `parse` when given, else `default`.
fn given<T, E>(
    v: Option<String>,
    parse: impl FnOnce(String) -> Result<T, E>,
    default: T,
) -> Result<T, ConfigError>
where
    ConfigError: From<E>,
{
    match v {
        Some(text) => Ok(parse(text)?),
        None => Ok(default),
    }
}

/// A duration flag `name` (like 10s or 500ms), `default` when not given.
fn duration(
    name: &'static str,
    v: Option<String>,
    default: Duration,
) -> Result<Duration, ConfigError> {
    match v {
        Some(text) => parse_us(&text)
            .map(Duration::from_micros)
            .ok_or(ConfigError::Duration(name, text)),
        None => Ok(default),
    }
}

/// `--embedding-dimensions`: from 1 to [`MAX_DIMENSIONS`].
fn dimensions(v: Option<u32>, default: u32) -> Result<u32, ConfigError> {
    let dimensions = v.unwrap_or(default);
    if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
        return Err(ConfigError::Dimensions(dimensions));
    }
    Ok(dimensions)
}

/// `--spin`: `auto`, or a duration of at most 1 ms.
fn spin(v: Option<String>, default: Spin) -> Result<Spin, ConfigError> {
    let Some(text) = v else {
        return Ok(default);
    };
    let parsed = match parse_us(&text) {
        Some(us) => Some(Spin::Fixed(Duration::from_micros(us))),
        None => Spin::parse(&text),
    };
    match parsed {
        Some(Spin::Fixed(d)) if d > MAX_SPIN => Err(ConfigError::Spin(text)),
        Some(spin) => Ok(spin),
        None => Err(ConfigError::Spin(text)),
    }
}

/// `--http1`: the own server or hyper's.
fn http1(v: Option<&str>, default: Http1Server) -> Result<Http1Server, ConfigError> {
    match v {
        None => Ok(default),
        Some("own") => Ok(Http1Server::Own),
        Some("hyper") => Ok(Http1Server::Hyper),
        Some(other) => Err(ConfigError::Http1(other.to_string())),
    }
}

/// `--threads` and `--cores`: the worker count (by default one per pinned core, else one per
/// core) and the cores, checked.
fn workers(
    threads: Option<usize>,
    pinned: Option<String>,
) -> Result<(usize, Vec<usize>), ConfigError> {
    let here = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cores = match pinned {
        Some(text) => gatebench_shared::host::parse_cores(&text, here)
            .ok_or_else(|| ConfigError::Cores(text.clone(), here))?,
        None => Vec::new(),
    };
    let threads = threads.unwrap_or(if cores.is_empty() { here } else { cores.len() });
    if !(1..=1024).contains(&threads) {
        return Err(ConfigError::Threads(threads));
    }
    Ok((threads, cores))
}

/// `--latency`, `--ttft`, `--itl` and `--tokens` as one latency model.
fn latency_model(
    latency: Option<String>,
    ttft: Option<String>,
    itl: Option<String>,
    tokens: Option<String>,
) -> Result<LatencyModel, ConfigError> {
    let dist = |v: Option<String>| v.map(|s| s.parse::<Distribution>()).transpose();
    Ok(LatencyModel {
        response: dist(latency)?,
        ttft: dist(ttft)?.unwrap_or(Distribution::ZERO),
        itl: dist(itl)?.unwrap_or(Distribution::ZERO),
        tokens: match tokens {
            Some(t) => t.parse::<TokenCount>()?,
            None => Config::default().latency.tokens,
        },
    })
}

/// `--tls-names` and `--tls-ca-file`: TLS with a generated certificate for those names, or none.
fn tls(names: Option<String>, ca_file: Option<String>) -> Result<Option<TlsSettings>, ConfigError> {
    let Some(text) = names else {
        return Ok(None);
    };
    let names: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() || names.iter().any(|n| n.contains(char::is_whitespace)) {
        return Err(ConfigError::TlsNames(text));
    }
    Ok(Some(TlsSettings {
        names,
        ca_file: ca_file.unwrap_or_else(|| "mock-ca.pem".to_string()).into(),
    }))
}
