//! Steering gatebench mocks during a measurement, and reading what reached them: each mock's
//! control route (`POST /v1/gatebench/control`, loopback only) changes what it does for a
//! window it times itself, and its record (`GET /v1/gatebench/record`) lists every arrival
//! with the mark loadgen put on the request, its status and its `CLOCK_MONOTONIC` instant.
//! [`Steered`] resets every mock it steered when it is dropped, so every exit path (an error, a
//! Ctrl-C that stopped the run) leaves them as they started.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::target::Target;
use crate::wire::plain::call;

/// Prefix of the mark loadgen writes into a body's `user` field: `gb-` and 20 digits.
pub const USER_MARK_PREFIX: &str = "gb-";

/// Longest a control or record call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest record read (a few hundred thousand arrivals).
const MAX_RECORD_BYTES: usize = 256 * 1024 * 1024;

/// One mock, by the name the gateway's configuration knows it by, and its control listener.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub name: String,
    pub control: Target,
}

/// A change of what a mock does: its faults, its latency, whether it refuses connections,
/// from `after_ms` on for `for_ms` (absent: until reset).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Change {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// Replaces the latency of a whole answer and, as `ttft`, a stream's time to first token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refuse: bool,
    pub after_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_ms: Option<u64>,
}

/// A mock's steered state, as its control route answers.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SteerState {
    #[serde(default)]
    pub since_ns: Option<u64>,
    #[serde(default)]
    pub until_ns: Option<u64>,
}

/// One request as a mock saw it.
#[derive(Debug, Clone, Deserialize)]
pub struct Arrival {
    pub i: u64,
    pub t_ns: u64,
    #[serde(default)]
    pub seq: Option<u64>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub key: Option<String>,
    pub status: u16,
    #[serde(default)]
    pub cut: bool,
}

impl Arrival {
    /// The client request it carries: the `x-gatebench-seq` header, else the body's mark.
    pub fn client_seq(&self) -> Option<u64> {
        self.seq.or_else(|| {
            self.user
                .as_deref()?
                .strip_prefix(USER_MARK_PREFIX)?
                .parse()
                .ok()
        })
    }

    /// Whether it carried a mark at all.
    pub fn marked(&self) -> bool {
        self.client_seq().is_some()
    }
}

/// What a mock's record holds from an index on.
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    #[serde(default)]
    pub name: Option<String>,
    pub next: u64,
    #[serde(default)]
    pub dropped: u64,
    #[serde(default)]
    pub arrivals: Vec<Arrival>,
}

impl Upstream {
    /// `NAME=URL` of a mock's control listener (`http://127.0.0.1:PORT`).
    pub fn parse(text: &str) -> Result<Upstream, String> {
        let (name, url) = text
            .split_once('=')
            .filter(|(n, u)| !n.is_empty() && !u.is_empty())
            .ok_or_else(|| {
                format!("--upstream {text:?}: expected NAME=URL of a mock's control listener")
            })?;
        let control = crate::wire::target::parse_target(url)
            .map_err(|e| format!("--upstream {name}: {e}"))?;
        if control.tls {
            return Err(format!(
                "--upstream {name}: the control route is plain http://"
            ));
        }
        if !control.resolved.ip().is_loopback() {
            return Err(format!(
                "--upstream {name}: {url} is not on loopback; a mock is steered only there"
            ));
        }
        Ok(Upstream {
            name: name.into(),
            control,
        })
    }

    fn ask(&self, method: &str, path: &str, body: &[u8]) -> Result<String, String> {
        let answer = call(
            &self.control,
            method,
            path,
            &[],
            body,
            CALL_TIMEOUT,
            MAX_RECORD_BYTES,
        )
        .map_err(|e| format!("upstream {}: {e}", self.name))?;
        if answer.status != 200 {
            return Err(format!(
                "upstream {}: {method} {path} answered {}: {}",
                self.name,
                answer.status,
                answer.text().chars().take(300).collect::<String>()
            ));
        }
        Ok(answer.text())
    }

    /// Applies `change`; the state the mock answers with.
    pub fn steer(&self, change: &Change) -> Result<SteerState, String> {
        let body = serde_json::to_vec(change).map_err(|e| e.to_string())?;
        let text = self.ask("POST", "/v1/gatebench/control", &body)?;
        serde_json::from_str(&text).map_err(|e| format!("upstream {}: {e}", self.name))
    }

    /// Back to how the mock started.
    pub fn reset(&self) -> Result<(), String> {
        self.ask("POST", "/v1/gatebench/control/reset", b"")
            .map(drop)
    }

    /// The arrivals from index `since` on.
    pub fn record(&self, since: u64) -> Result<Record, String> {
        let text = self.ask("GET", &format!("/v1/gatebench/record?since={since}"), b"")?;
        serde_json::from_str(&text)
            .map_err(|e| format!("upstream {}: its record does not read: {e}", self.name))
    }

    /// The index the next arrival will get (so a trial reads only its own).
    pub fn mark(&self) -> Result<u64, String> {
        self.record(u64::MAX).map(|r| r.next)
    }
}

/// The mocks steered by one measurement, reset on drop.
pub struct Steered<'a> {
    pub upstreams: &'a [Upstream],
    /// Reset already (by [`Steered::release`]).
    released: bool,
}

impl<'a> Steered<'a> {
    /// Checks that every mock answers on its control route with its record on, and resets it.
    pub fn take(upstreams: &'a [Upstream]) -> Result<Steered<'a>, String> {
        for u in upstreams {
            u.reset().map_err(|e| {
                format!("{e} (start it with --control 127.0.0.1:PORT --record 1000000)")
            })?;
            let record = u
                .record(u64::MAX)
                .map_err(|e| format!("{e} (start it with --record 1000000)"))?;
            if let Some(name) = record.name.filter(|n| *n != u.name) {
                return Err(format!(
                    "--upstream {}: the mock at {} is named {name:?} (its --name); the names \
                     must agree, or every figure would be of the wrong upstream",
                    u.name, u.control.url
                ));
            }
        }
        Ok(Steered {
            upstreams,
            released: false,
        })
    }

    /// Resets every mock, saying which could not be; nothing is reset again on drop.
    pub fn release(mut self) -> Vec<String> {
        self.released = true;
        self.upstreams
            .iter()
            .filter_map(|u| u.reset().err())
            .collect()
    }
}

impl Drop for Steered<'_> {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        for problem in self.upstreams.iter().filter_map(|u| u.reset().err()) {
            gatebench_shared::say!("loadgen: could not reset a mock: {problem}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrival_carries_its_request_by_header_or_body_mark() {
        let a: Arrival = serde_json::from_str(
            r#"{"i":3,"t_ns":10,"seq":null,"user":"gb-00000000000000000042","key":null,"route":"chat","status":200,"cut":false}"#,
        )
        .unwrap();
        assert_eq!(a.client_seq(), Some(42));
        let b: Arrival =
            serde_json::from_str(r#"{"i":4,"t_ns":11,"seq":7,"user":"someone","status":503}"#)
                .unwrap();
        assert_eq!(b.client_seq(), Some(7));
        let c: Arrival = serde_json::from_str(r#"{"i":5,"t_ns":12,"status":200}"#).unwrap();
        assert!(!c.marked());
    }

    #[test]
    fn upstreams_are_named_loopback_control_urls() {
        let u = Upstream::parse("a=http://127.0.0.1:9000").unwrap();
        assert_eq!(u.name, "a");
        assert!(Upstream::parse("a").is_err());
        assert!(Upstream::parse("=http://127.0.0.1:9000").is_err());
        assert!(Upstream::parse("a=https://127.0.0.1:9000").is_err());
    }

    #[test]
    fn a_change_is_sent_with_only_what_it_sets() {
        let c = Change {
            faults: vec!["503:100%".into()],
            after_ms: 1000,
            for_ms: Some(2000),
            ..Change::default()
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"faults":["503:100%"],"after_ms":1000,"for_ms":2000}"#
        );
    }
}
