//! The demo's embedded mock: mock-upstream from its library, on loopback, on its own core.

use mock_upstream::{Config, MockServer, StartError};

use crate::model::target::Target;
use crate::wire::target::parse_target;

/// A mock started in-process for a run without `--target`.
#[derive(Debug)]
pub struct EmbeddedMock {
    server: MockServer,
    pub target: Target,
    /// The mock's configuration, disclosed in the result.
    pub config_toml: String,
}

impl EmbeddedMock {
    /// Starts one mock worker on `127.0.0.1:0`, pinned to the last core when there are two or
    /// more, with the default (zero) latency model.
    pub fn start(cores: usize) -> Result<EmbeddedMock, StartError> {
        EmbeddedMock::with_latency(cores, None)
    }

    /// [`EmbeddedMock::start`], answering each request `latency` after it arrived (a
    /// `--latency` value like `200us`), or at once.
    pub fn with_latency(cores: usize, latency: Option<&str>) -> Result<EmbeddedMock, StartError> {
        let mut config = Config {
            threads: 1,
            cores: if cores >= 2 {
                vec![cores - 1]
            } else {
                Vec::new()
            },
            ..Config::loopback()
        };
        config.latency.response = latency.map(|l| {
            // Invariant: callers pass durations written in the source, which parse.
            l.parse().expect("a latency like 200us")
        });
        let config_toml = config.to_toml();
        let server = MockServer::start(config)?;
        let url = format!("http://{}/v1/chat/completions", server.local_addr());
        // Invariant: a loopback socket address always parses as a target.
        let target = parse_target(&url).expect("loopback target");
        Ok(EmbeddedMock {
            server,
            target,
            config_toml,
        })
    }

    /// The mock's emission error at quantile `q` (how late it answered against the instant its
    /// latency model set), µs; none before its first timed answer.
    pub fn emission_error_us(&self, q: f64) -> Option<u64> {
        let error = &self.server.metrics().emission_error;
        (error.count() > 0).then(|| error.quantile_us(q))
    }
}
