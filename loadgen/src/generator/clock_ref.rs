//! This host's clock against a reference clock (`--clock-ref`: a gatebench mock's
//! `GET /v1/gatebench/clock`), the way NTP compares two clocks: the reference's reading is taken
//! to have been made at the middle of the round trip, so the offset is known to within half of
//! it. Shards on several hosts that measure against one reference can be compared on its clock.

use std::time::SystemTime;

use crate::generator::start_at::unix_us;
use crate::model::target::Target;
use crate::results::clock::ReferenceClock;

/// The path of the mock's clock.
pub const CLOCK_PATH: &str = "/v1/gatebench/clock";
/// Round trips made; the shortest is kept.
const PROBES: usize = 8;

/// Measures the offset, or `None` when the reference does not answer as a gatebench mock's
/// clock (within a second a round trip).
pub fn measure(target: &Target) -> Option<ReferenceClock> {
    let mut best: Option<(i64, i64)> = None;
    for _ in 0..PROBES {
        let stream = crate::wire::get::connect(target)?;
        let sent = unix_us(SystemTime::now());
        let body = crate::wire::get::fetch(stream, target, CLOCK_PATH)?;
        let received = unix_us(SystemTime::now());
        let reference = parse(&body)?;
        let round_trip = received - sent;
        let offset = reference - (sent + received) / 2;
        if best.is_none_or(|(rtt, _)| round_trip < rtt) {
            best = Some((round_trip, offset));
        }
    }
    let (round_trip, offset_us) = best?;
    Some(ReferenceClock {
        url: target.url.clone(),
        offset_us,
        error_us: (round_trip + 1) / 2,
    })
}

/// The reading in the mock's answer, `{"unix_us":N}`.
fn parse(body: &str) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    value.get("unix_us")?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_parse_from_the_mocks_answer_only() {
        assert_eq!(
            parse(r#"{"unix_us":1796025600000000}"#),
            Some(1_796_025_600_000_000)
        );
        assert_eq!(parse("ttft = 0"), None);
        assert_eq!(parse(r#"{"unix_us":"soon"}"#), None);
    }

    #[test]
    fn a_mock_on_this_host_is_zero_off_within_the_error() {
        let server = mock_upstream::MockServer::start(mock_upstream::Config::loopback()).unwrap();
        let url = format!("http://{}/", server.local_addr());
        let target = crate::wire::target::parse_target(&url).unwrap();
        let r = measure(&target).expect("a mock's clock answers");
        // The same clock: the offset is within the error, give or take the scheduler.
        assert!(r.offset_us.abs() <= r.error_us + 2_000, "{r:?}");
        assert!(r.error_us < 1_000_000, "{r:?}");
    }
}
