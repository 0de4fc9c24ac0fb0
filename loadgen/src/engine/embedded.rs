//! The demo's embedded mock: mock-upstream from its library, on loopback, on its own core.

use mock_upstream::{Config, MockServer, StartError};

use crate::results::target::Target;
use crate::wire::target::parse_target;

/// A mock started in-process for a run without `--target`.
#[derive(Debug)]
pub struct EmbeddedMock {
    _server: MockServer,
    pub target: Target,
    /// The mock's configuration, disclosed in the result.
    pub config_toml: String,
}

impl EmbeddedMock {
    /// Starts one mock worker on `127.0.0.1:0`, pinned to the last core when there are two or
    /// more, with the default (zero) latency model.
    pub fn start(cores: usize) -> Result<EmbeddedMock, StartError> {
        let config = Config {
            threads: 1,
            pin: if cores >= 2 {
                vec![cores - 1]
            } else {
                Vec::new()
            },
            ..Config::loopback()
        };
        let config_toml = config.to_toml();
        let server = MockServer::start(config)?;
        let url = format!("http://{}/v1/chat/completions", server.local_addr());
        // Invariant: a loopback socket address always parses as a target.
        let target = parse_target(&url).expect("loopback target");
        Ok(EmbeddedMock {
            _server: server,
            target,
            config_toml,
        })
    }
}
