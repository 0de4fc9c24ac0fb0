//! What a result discloses about the upstream: when the direct target is a gatebench mock, its
//! own resolved configuration (latency model, token counts, seed), read once before the load
//! from `GET /v1/gatebench/config`. `report::disclosure` renders it.

use crate::model::target::Target;
use crate::wire::get::get;

/// The path the mock serves its configuration on.
const CONFIG_PATH: &str = "/v1/gatebench/config";

/// The mock's configuration (TOML) behind `target`, or `None` when it is not a gatebench mock
/// (or does not answer within a second).
pub fn mock_config(target: &Target) -> Option<String> {
    let text = get(target, CONFIG_PATH)?;
    // A gatebench mock's configuration names its latency model.
    text.contains("ttft").then_some(text)
}
