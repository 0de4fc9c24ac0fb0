//! One request's latency, decided in one place: the configured model (`--latency`, `--ttft`,
//! `--itl`, `--tokens`), with what the steered state in force replaces (`POST
//! /v1/gatebench/control`) and then what the request's `x-mock-latency`, `x-mock-ttft`,
//! `x-mock-itl` and `x-mock-tokens` headers override, drawn from `--seed`'s latency stream.
//!
//! The draw is made once, when a request is admitted; the whole answer's wait
//! (`api::pipeline`) and the stream's pacing (`answer::sse`) spend it.

use gatebench_shared::{Distribution, LatencyModel, RequestDraw, TokenCount};

use crate::config::Config;

/// What a steered state or a request's headers replace in the latency model (`None`: keep).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Changes {
    /// A whole answer's time (`--latency`).
    pub response: Option<Distribution>,
    pub ttft: Option<Distribution>,
    pub itl: Option<Distribution>,
    pub tokens: Option<TokenCount>,
}

/// A header value the latency model cannot read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadValue;

impl Changes {
    /// True when nothing is replaced.
    pub fn is_empty(&self) -> bool {
        *self == Changes::default()
    }

    /// Reads the value of header `x-mock-{key}` when `key` is one of the model's (`latency`,
    /// `ttft`, `itl`, `tokens`): `Ok(true)` once read, `Ok(false)` for any other key.
    pub fn read_header(&mut self, key: &str, value: &str) -> Result<bool, BadValue> {
        let distribution = |v: &str| v.parse::<Distribution>().map_err(|_| BadValue);
        match key {
            "latency" => self.response = Some(distribution(value)?),
            "ttft" => self.ttft = Some(distribution(value)?),
            "itl" => self.itl = Some(distribution(value)?),
            "tokens" => self.tokens = Some(value.parse().map_err(|_| BadValue)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `model` with these changes.
    fn applied_to(&self, model: LatencyModel) -> LatencyModel {
        LatencyModel {
            response: self.response.or(model.response),
            ttft: self.ttft.unwrap_or(model.ttft),
            itl: self.itl.unwrap_or(model.itl),
            tokens: self.tokens.unwrap_or(model.tokens),
        }
    }
}

/// True when the configuration ever makes an answer wait (the model is not instant, or the
/// prefill model is on), so every request's arrival time is read. A request's headers or a
/// steered state can still make one answer wait; the arrival time is then read for it alone.
pub fn waits(config: &Config) -> bool {
    !config.latency.is_instant() || config.prefill.is_on()
}

/// The draws of request `ordinal`: the configured model, as `steered` (the state in force)
/// and then `headers` change it.
pub fn draw(
    config: &Config,
    steered: Option<&Changes>,
    headers: &Changes,
    ordinal: u64,
) -> RequestDraw {
    let mut model = config.latency;
    if let Some(steered) = steered {
        model = steered.applied_to(model);
    }
    // Most requests carry no header that changes the model: they skip the rebuild.
    if !headers.is_empty() {
        model = headers.applied_to(model);
    }
    model.request(config.seed, ordinal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_win_over_the_steered_state_which_wins_over_the_configuration() {
        let config = Config {
            latency: LatencyModel {
                ttft: "30ms".parse().unwrap(),
                itl: "2ms".parse().unwrap(),
                ..LatencyModel::default()
            },
            ..Config::default()
        };
        let steered = Changes {
            ttft: Some("20ms".parse().unwrap()),
            response: Some("50ms".parse().unwrap()),
            ..Changes::default()
        };
        let mut headers = Changes::default();
        assert_eq!(headers.read_header("ttft", "10ms"), Ok(true));
        assert_eq!(headers.read_header("tokens", "4"), Ok(true));
        assert_eq!(headers.read_header("status", "503"), Ok(false));
        assert_eq!(headers.read_header("itl", "fast"), Err(BadValue));
        let mut d = draw(&config, Some(&steered), &headers, 0);
        assert_eq!((d.tokens(), d.ttft_us(), d.itl_us()), (4, 10_000, 2_000));
        assert_eq!(d.response_us(4), 50_000);
        let mut d = draw(&config, Some(&steered), &Changes::default(), 0);
        assert_eq!((d.tokens(), d.ttft_us()), (16, 20_000));
        let mut d = draw(&config, None, &Changes::default(), 0);
        assert_eq!(d.response_us(16), 30_000 + 15 * 2_000);
        assert!(waits(&config) && !waits(&Config::default()));
    }
}
