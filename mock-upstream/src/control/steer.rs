//! The body of `POST /v1/gatebench/control` read into a [`Steer`]: plain data, each bad field
//! a [`SteerError`] that names it and says what it takes (answered as a 400).

use std::time::Duration;

use gatebench_shared::Distribution;
use serde::Deserialize;

use crate::config::FaultRates;
use crate::timing::latency::Changes;

/// A steered state: what replaces the start-up configuration, from when, for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Steer {
    /// Replace the configured `--fault` rates (`None`: keep them).
    pub faults: Option<FaultRates>,
    /// What replaces `--latency` and `--ttft` (`None`: keep it).
    pub latency: Changes,
    /// Close the main listener and drop its connections at their next request.
    pub refuse: bool,
    /// Time from the POST to the state taking effect.
    pub after: Duration,
    /// How long it stays in force (`None`: until reset or replaced).
    pub lasts: Option<Duration>,
}

/// The body as given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSteer {
    faults: Option<Vec<String>>,
    latency: Option<String>,
    ttft: Option<String>,
    refuse: Option<bool>,
    after_ms: Option<u64>,
    for_ms: Option<u64>,
}

/// What each field takes, for the 400s.
const EXPECTED: &str = "expected a JSON object with any of faults (a list of --fault settings like [\"503:100%\", \"chat:reset@5:50%\"]), latency and ttft (distributions like \"50ms\" or \"uniform:10ms..30ms\"), refuse (true or false), after_ms and for_ms (whole milliseconds)";

/// A control body the mock cannot use: the field at fault and what it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SteerError {
    /// The field (`faults`, `latency`, …), or `body` for the body as a whole.
    pub field: String,
    pub message: String,
}

fn refused(field: &str, message: String) -> SteerError {
    SteerError {
        field: field.to_string(),
        message,
    }
}

impl Steer {
    /// Reads a POST body; an empty body is the empty state (the start-up configuration,
    /// marked as steered).
    pub fn parse(body: &[u8]) -> Result<Steer, SteerError> {
        let body = if body.iter().all(u8::is_ascii_whitespace) {
            b"{}".as_slice()
        } else {
            body
        };
        // serde would read an array as the struct's fields in order.
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(refused(
                "body",
                format!("Invalid control body: {EXPECTED}."),
            ));
        }
        let mut deserializer = serde_json::Deserializer::from_slice(body);
        let raw: RawSteer = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            let detail = inner
                .rsplit_once(" at line ")
                .map_or(inner.as_str(), |(d, _)| d);
            // An unknown field is named by serde's words; a wrong type by its path.
            let field = match detail.strip_prefix("unknown field `") {
                Some(rest) => rest.split('`').next().unwrap_or("body").to_string(),
                None if path == "." => "body".to_string(),
                None => path,
            };
            refused(
                &field,
                format!("Invalid control body at '{field}': {detail}; {EXPECTED}."),
            )
        })?;
        let faults = match raw.faults {
            Some(settings) => Some(
                FaultRates::parse(&settings)
                    .map_err(|e| refused("faults", format!("Invalid faults: {e}.")))?,
            ),
            None => None,
        };
        let distribution = |field: &str, text: Option<String>| match text {
            Some(text) => text
                .parse::<Distribution>()
                .map(Some)
                .map_err(|e| refused(field, format!("Invalid {field} '{text}': {e}."))),
            None => Ok(None),
        };
        Ok(Steer {
            faults,
            latency: Changes {
                response: distribution("latency", raw.latency)?,
                ttft: distribution("ttft", raw.ttft)?,
                ..Changes::default()
            },
            refuse: raw.refuse.unwrap_or(false),
            after: Duration::from_millis(raw.after_ms.unwrap_or(0)),
            lasts: raw.for_ms.map(Duration::from_millis),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_body_reads_and_every_field_is_optional() {
        let steer = Steer::parse(
            br#"{"faults":["503:50%","chat:reset@5:50%"],"latency":"50ms","ttft":"20ms","refuse":true,"after_ms":10,"for_ms":2000}"#,
        )
        .unwrap();
        assert_eq!(
            steer.faults.unwrap().to_settings(),
            ["503:50%", "chat:reset@5:50%"]
        );
        // The rates of one route add up to at most 100%, as with --fault.
        let over = Steer::parse(br#"{"faults":["503:100%","chat:reset@5:50%"]}"#).unwrap_err();
        assert!(over.message.contains("at most 100%"), "{}", over.message);
        assert_eq!(
            steer.latency.response,
            Some(Distribution::Fixed { us: 50_000 })
        );
        assert_eq!(steer.latency.ttft, Some(Distribution::Fixed { us: 20_000 }));
        assert!(steer.refuse);
        assert_eq!(steer.after, Duration::from_millis(10));
        assert_eq!(steer.lasts, Some(Duration::from_secs(2)));
        let empty = Steer::parse(b"{}").unwrap();
        assert_eq!(empty, Steer::parse(b"").unwrap());
        assert_eq!(
            (empty.faults, empty.refuse, empty.lasts),
            (None, false, None)
        );
    }

    #[test]
    fn bad_bodies_name_the_field() {
        let cases: [(&[u8], &str); 8] = [
            (br#"{"fault":["503:1%"]}"#, "fault"),
            (br#"{"faults":["200:1%"]}"#, "faults"),
            (br#"{"faults":"503:1%"}"#, "faults"),
            (br#"{"latency":"fast"}"#, "latency"),
            (br#"{"ttft":5}"#, "ttft"),
            (br#"{"refuse":"yes"}"#, "refuse"),
            (br#"{"for_ms":-1}"#, "for_ms"),
            (b"[1]", "body"),
        ];
        for (body, field) in cases {
            let err = Steer::parse(body).unwrap_err();
            assert_eq!(err.field, field, "{}", err.message);
            assert!(err.message.contains(field), "{}", err.message);
        }
        assert!(Steer::parse(b"{")
            .unwrap_err()
            .message
            .contains("expected a JSON object"));
    }
}
