//! Node.js, read at one edge of a window: V8's sampling heap profiler, as the endpoint
//! `scripts/gateways/lib/v8-heap.js` serves it from inside the gateway (one JSON object of
//! cumulative estimates since the profiler started, collected objects included).
//!
//! The profiler takes one allocation in about every `sampling_interval_bytes` (a Poisson
//! process) and weighs each by the bytes it stands for, so objects, bytes and stacks are
//! estimates, not counts; V8 counts no frees, so there are none.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::reading::Reading;
use crate::model::target::Target;
use crate::results::profile::Folded;
use crate::wire::get::get_limited;

/// Largest answer read (its stacks are most of it).
const MAX_BYTES: usize = 32 << 20;
/// Time allowed for an answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// One reading of a Node.js process, with what it says of how it was taken.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeReading {
    /// Objects and bytes allocated (estimated), bytes live on V8's heap, stacks by bytes.
    pub reading: Reading,
    /// Node's version, like `v18.19.0`.
    pub version: String,
    /// The profiler's mean distance between samples, in bytes allocated.
    pub sampling_interval_bytes: u64,
    /// V8's heap as reserved (`heapTotal`), bytes.
    pub heap_total_bytes: u64,
    /// The process's resident set as Node reported it, bytes.
    pub rss_bytes: u64,
}

impl NodeReading {
    /// What the figures are, for a result: "V8 sampling heap profiler (Node v18.19.0), one
    /// sample per ~32 KiB allocated: estimates, not counts".
    pub fn describe(&self) -> String {
        format!(
            "V8 sampling heap profiler (Node {}), one sample per ~{} allocated: estimates, \
             not counts",
            self.version,
            interval_text(self.sampling_interval_bytes)
        )
    }
}

/// The endpoint's body.
#[derive(Debug, Deserialize)]
struct Body {
    version: String,
    sampling_interval_bytes: f64,
    allocated_bytes: f64,
    allocated_objects: f64,
    heap_used_bytes: f64,
    heap_total_bytes: f64,
    rss_bytes: f64,
    stacks: BTreeMap<String, Weight>,
}

/// A stack's estimated allocations.
#[derive(Debug, Deserialize)]
struct Weight {
    bytes: f64,
}

/// The reading the endpoint at `endpoint` (its path) serves.
pub fn read(endpoint: &Target) -> Result<NodeReading, String> {
    let body = get_limited(endpoint, &endpoint.path, MAX_BYTES, TIMEOUT)?;
    let url = format!("http://{}{}", endpoint.authority, endpoint.path);
    parse(&body).map_err(|why| format!("{url}: {why}"))
}

/// A reading from the endpoint's JSON.
fn parse(text: &str) -> Result<NodeReading, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("the answer is not JSON: {e}"))?;
    match value.get("runtime").and_then(|r| r.as_str()) {
        Some("node") => {}
        Some(other) => {
            return Err(format!(
                "the answer is for runtime '{other}', not node: not the V8 heap endpoint"
            ))
        }
        None => return Err("the answer names no runtime: not the V8 heap endpoint".into()),
    }
    let body: Body =
        serde_json::from_value(value).map_err(|e| format!("the answer does not parse: {e}"))?;
    let count = |name: &str, v: f64| {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{name} is {v}, not a count"))
        }
    };
    let interval = count("sampling_interval_bytes", body.sampling_interval_bytes)?;
    if interval < 1.0 {
        return Err("sampling_interval_bytes is 0: the profiler is not sampling".into());
    }
    let mut stacks = Folded::default();
    for (stack, weight) in &body.stacks {
        let bytes = count("a stack's bytes", weight.bytes)?.round() as u64;
        if bytes > 0 {
            stacks.0.insert(stack.clone(), bytes);
        }
    }
    Ok(NodeReading {
        reading: Reading {
            allocs: count("allocated_objects", body.allocated_objects)?,
            bytes: count("allocated_bytes", body.allocated_bytes)?,
            frees: None,
            live_heap_bytes: Some(count("heap_used_bytes", body.heap_used_bytes)?),
            stacks: Some(stacks),
        },
        version: body.version,
        sampling_interval_bytes: interval.round() as u64,
        heap_total_bytes: count("heap_total_bytes", body.heap_total_bytes)?.round() as u64,
        rss_bytes: count("rss_bytes", body.rss_bytes)?.round() as u64,
    })
}

/// A sampling interval in the unit it was likely given in: `32 KiB`, `512 KiB`, `1000 bytes`.
fn interval_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{"runtime":"node","version":"v18.19.0","sampling_interval_bytes":32768,
        "allocated_bytes":1.5e7,"allocated_objects":250000.5,"heap_used_bytes":8000000,
        "heap_total_bytes":12000000,"rss_bytes":60000000,
        "stacks":{"(root);main;handle":{"bytes":1234.6,"objects":10.2},
                  "(root);main;idle":{"bytes":0.2,"objects":0.01}}}"#;

    #[test]
    fn the_endpoint_answer_is_a_reading_of_estimates() {
        let r = parse(BODY).unwrap();
        assert_eq!(r.reading.allocs, 250_000.5);
        assert_eq!(r.reading.bytes, 15_000_000.0);
        assert_eq!(r.reading.frees, None);
        assert_eq!(r.reading.live_heap_bytes, Some(8_000_000.0));
        let stacks = r.reading.stacks.as_ref().unwrap();
        // Rounded; a stack that rounds to nothing is dropped.
        assert_eq!(stacks.0.len(), 1);
        assert_eq!(stacks.0["(root);main;handle"], 1235);
        assert_eq!((r.heap_total_bytes, r.rss_bytes), (12_000_000, 60_000_000));
        assert_eq!(
            r.describe(),
            "V8 sampling heap profiler (Node v18.19.0), one sample per ~32 KiB allocated: \
             estimates, not counts"
        );
    }

    #[test]
    fn a_wrong_answer_says_what_is_wrong() {
        let python = BODY.replace("\"node\"", "\"python\"");
        assert!(parse(&python).unwrap_err().contains("'python', not node"));
        assert!(parse("<html>").unwrap_err().contains("not JSON"));
        assert!(parse("{}").unwrap_err().contains("names no runtime"));
        let partial = r#"{"runtime":"node","version":"v18"}"#;
        assert!(parse(partial).unwrap_err().contains("missing field"));
        let zero = BODY.replace("32768", "0");
        assert!(parse(&zero).unwrap_err().contains("not sampling"));
        let negative = BODY.replace("1.5e7", "-1");
        assert!(parse(&negative).unwrap_err().contains("allocated_bytes"));
    }

    #[test]
    fn nothing_answering_is_said_with_the_url() {
        // A port just closed: nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/v8-heap");
        let target = crate::wire::target::parse_target(&url).unwrap();
        let err = read(&target).unwrap_err();
        assert!(
            err.contains("nothing answered") && err.contains(&url),
            "{err}"
        );
    }

    #[test]
    fn intervals_are_said_in_their_unit() {
        assert_eq!(interval_text(32768), "32 KiB");
        assert_eq!(interval_text(1 << 20), "1 MiB");
        assert_eq!(interval_text(1000), "1000 bytes");
    }
}
