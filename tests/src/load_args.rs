//! loadgen's options for a test: a quiet run against one target, and the mock's chat URL.

use loadgen::LoadArgs;

/// The load options of a quiet run against `target`, on 32 connections; the test adds the rest.
pub fn args(target: String) -> LoadArgs {
    LoadArgs {
        targets: vec![target],
        quiet: true,
        connections: Some(32),
        ..LoadArgs::default()
    }
}

/// The chat completions URL of `mock`.
pub fn url(mock: &mock_upstream::MockServer) -> String {
    format!("http://{}/v1/chat/completions", mock.local_addr())
}
