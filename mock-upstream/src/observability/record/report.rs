//! The JSON of `GET /v1/gatebench/record?since=K` (docs/mock-routes.md).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Recorder, Snapshot};

#[derive(Serialize)]
struct Report<'a> {
    name: Option<&'a str>,
    now_ns: u64,
    started_ns: u64,
    next: u64,
    dropped: u64,
    arrivals: Vec<Arrival<'a>>,
    per_second: Vec<Second>,
}

#[derive(Serialize)]
struct Arrival<'a> {
    i: u64,
    t_ns: u64,
    seq: Option<u64>,
    user: Option<&'a str>,
    key: Option<String>,
    route: &'static str,
    status: u16,
    cut: bool,
}

#[derive(Serialize)]
struct Second {
    second: u64,
    by_status: BTreeMap<String, u64>,
}

/// The `since` of a query (`since=K`; 0 when absent), or the value that is no whole number.
pub fn since_of(query: Option<&str>) -> Result<u64, &str> {
    let Some(value) = query
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("since="))
    else {
        return Ok(0);
    };
    value.parse().map_err(|_| value)
}

/// The record from `since` on, as JSON, for a mock named `name`, read at `now_ns`.
pub fn record_json(recorder: &Recorder, since: u64, name: Option<&str>, now_ns: u64) -> Vec<u8> {
    let snapshot = recorder.snapshot(since);
    let Snapshot {
        started_ns,
        next,
        dropped,
        ref arrivals,
        ref seconds,
    } = snapshot;
    let arrivals = arrivals
        .iter()
        .map(|(i, a)| Arrival {
            i: *i,
            t_ns: a.t_ns,
            seq: a.seq,
            user: a.user.get(),
            key: a.key.map(|k| format!("{k:08x}")),
            route: a.route,
            status: a.status,
            cut: a.cut,
        })
        .collect();
    // Every whole second since start, up to the one running now.
    let now_second = now_ns.saturating_sub(started_ns) / 1_000_000_000;
    let last = (seconds.len() as u64).max(now_second + 1);
    let per_second = (0..last)
        .map(|second| Second {
            second,
            by_status: seconds
                .get(second as usize)
                .into_iter()
                .flatten()
                .map(|(status, n)| (status.to_string(), *n))
                .collect(),
        })
        .collect();
    let report = Report {
        name,
        now_ns,
        started_ns,
        next,
        dropped,
        arrivals,
        per_second,
    };
    // Invariant: a struct of numbers, strings and maps of strings always serialises.
    serde_json::to_vec(&report).expect("record serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observability::record::{Arrived, UserId};

    #[test]
    fn the_report_has_the_documented_shape() {
        let recorder = Recorder::new(2, 0).unwrap();
        recorder.push(Arrived {
            t_ns: 5,
            seq: Some(7),
            user: UserId::new("u"),
            key: Some(0xaf63_dc4c),
            route: "chat",
            status: 503,
            cut: false,
        });
        let json: serde_json::Value =
            serde_json::from_slice(&record_json(&recorder, 0, Some("A"), 2_500_000_000)).unwrap();
        assert_eq!(json["name"], "A");
        assert_eq!(json["next"], 1);
        assert_eq!(json["dropped"], 0);
        let a = &json["arrivals"][0];
        assert_eq!(
            (
                &a["i"],
                &a["seq"],
                &a["user"],
                &a["key"],
                &a["route"],
                &a["status"],
                &a["cut"]
            ),
            (
                &0.into(),
                &7.into(),
                &"u".into(),
                &"af63dc4c".into(),
                &"chat".into(),
                &503.into(),
                &false.into()
            )
        );
        let seconds = json["per_second"].as_array().unwrap();
        assert_eq!(seconds.len(), 3);
        assert_eq!(seconds[0]["by_status"]["503"], 1);
        assert_eq!(seconds[2]["second"], 2);
        assert_eq!(since_of(Some("since=12&x=1")).unwrap(), 12);
        assert_eq!(since_of(None).unwrap(), 0);
        assert_eq!(since_of(Some("since=-1")), Err("-1"));
    }
}
