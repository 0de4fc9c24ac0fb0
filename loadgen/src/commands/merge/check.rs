//! What makes results mergeable: each is one run of shard I/N of a plan, every shard is of the
//! same plan, and no shard is there twice (nor missing, unless asked).

use std::path::PathBuf;

use serde_json::Value;

use super::name;
use crate::results::run::SCHEMA;

/// Why shards cannot be merged. Each message names the files.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give the shards' results")]
    Empty,
    #[error("{0} is not a loadgen run result (schema '{1}', expected '{SCHEMA}')")]
    Schema(String, String),
    #[error("{0} is not a shard: it was not run with --shard I/N (a plain run sends the whole schedule, so two of them would add up to twice the plan)")]
    NotShard(String),
    #[error("{0} holds {1} runs: a shard holds exactly one")]
    Runs(String, usize),
    #[error("{0} is not from the same plan as {1}: {2}")]
    Plan(String, String, String),
    #[error("{0} and {1} are both shard {2}")]
    Duplicate(String, String, String),
    #[error("shards missing: have {have} of {count}, missing {missing} (give every shard's result, or --partial to merge anyway, marked invalid)")]
    Missing {
        have: String,
        count: u64,
        missing: String,
    },
}

/// One shard's result.
#[derive(Debug)]
pub struct ShardResult {
    pub path: PathBuf,
    pub value: Value,
    pub index: u64,
    pub count: u64,
}

/// The plan fields every shard must share: what is sent, at what rate, when and for how long.
/// Threads, connections, pinning and the spin window are each host's own.
const SHARED: &[&str] = &[
    "load",
    "duration_us",
    "requests",
    "warmup_us",
    "request",
    "timeout_us",
    "grace_us",
    "seed",
    "start_at",
    "max_error_rate",
    "max_p99_us",
];

/// Checks the shards and returns them in shard order.
pub fn shards(
    inputs: Vec<(PathBuf, Value)>,
    partial: bool,
) -> Result<Vec<ShardResult>, MergeError> {
    let mut shards = inputs
        .into_iter()
        .map(|(path, value)| shard(path, value))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = shards.first() else {
        return Err(MergeError::Empty);
    };
    for other in &shards[1..] {
        let differences = differences(&first.value, &other.value);
        if !differences.is_empty() {
            return Err(MergeError::Plan(
                name(&other.path),
                name(&first.path),
                differences.join("; "),
            ));
        }
    }
    shards.sort_by_key(|s| s.index);
    for pair in shards.windows(2) {
        if pair[0].index == pair[1].index {
            return Err(MergeError::Duplicate(
                name(&pair[0].path),
                name(&pair[1].path),
                format!("{}/{}", pair[0].index, pair[0].count),
            ));
        }
    }
    if !partial {
        all_there(&shards)?;
    }
    Ok(shards)
}

/// The file at `path` as one shard: a run result of shard I/N (N > 1) holding one run.
fn shard(path: PathBuf, value: Value) -> Result<ShardResult, MergeError> {
    let schema = value["schema"].as_str().unwrap_or("").to_string();
    if schema != SCHEMA {
        return Err(MergeError::Schema(name(&path), schema));
    }
    let count = value["plan"]["shard"]["count"].as_u64().unwrap_or(1);
    let index = value["plan"]["shard"]["index"].as_u64().unwrap_or(0);
    if count < 2 {
        return Err(MergeError::NotShard(name(&path)));
    }
    let runs = value["runs"].as_array().map_or(0, Vec::len);
    if runs != 1 {
        return Err(MergeError::Runs(name(&path), runs));
    }
    Ok(ShardResult {
        path,
        value,
        index,
        count,
    })
}

/// Refuses `shards` (in shard order) when some of their plan's are missing.
fn all_there(shards: &[ShardResult]) -> Result<(), MergeError> {
    let count = shards[0].count;
    if (shards.len() as u64) >= count {
        return Ok(());
    }
    let have: Vec<u64> = shards.iter().map(|s| s.index).collect();
    let missing: Vec<String> = (0..count)
        .filter(|i| !have.contains(i))
        .map(|i| i.to_string())
        .collect();
    let have: Vec<String> = have.iter().map(u64::to_string).collect();
    Err(MergeError::Missing {
        have: have.join(","),
        count,
        missing: missing.join(","),
    })
}

/// What differs between two shards' plans, as `field: A vs B`.
fn differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (pa, pb) = (&a["plan"], &b["plan"]);
    let mut compare = |field: &str, x: &Value, y: &Value| {
        if x != y {
            out.push(format!("{field} {x} vs {y}"));
        }
    };
    compare("shard count", &pa["shard"]["count"], &pb["shard"]["count"]);
    let urls = |p: &Value| -> Value {
        p["targets"]
            .as_array()
            .map(|ts| ts.iter().map(|t| t["url"].clone()).collect())
            .unwrap_or_default()
    };
    compare("target", &urls(pa), &urls(pb));
    for field in SHARED {
        compare(field, &pa[field], &pb[field]);
    }
    compare(
        "scenario",
        &a["runs"][0]["scenario"],
        &b["runs"][0]["scenario"],
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shard(index: u64, count: u64, rate: f64) -> (PathBuf, Value) {
        (
            PathBuf::from(format!("s{index}.json")),
            json!({
                "schema": SCHEMA,
                "plan": {
                    "shard": {"index": index, "count": count},
                    "targets": [{"url": "http://gw:80", "resolved": "10.0.0.1:80"}],
                    "load": {"mode": "open", "rate": rate, "arrival": "constant"},
                    "seed": 0,
                    "threads": index + 1,
                },
                "runs": [{"scenario": "chat"}],
            }),
        )
    }

    #[test]
    fn shards_of_one_plan_merge_whatever_their_threads() {
        let merged = shards(vec![shard(1, 2, 10.0), shard(0, 2, 10.0)], false).unwrap();
        assert_eq!(merged.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn shards_of_other_plans_duplicates_and_gaps_are_refused() {
        let err = shards(vec![shard(0, 2, 10.0), shard(1, 2, 20.0)], false).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("s1.json is not from the same plan as s0.json"),
            "{text}"
        );
        assert!(text.contains("load"), "{text}");
        let err = shards(vec![shard(0, 2, 10.0), shard(1, 3, 10.0)], false).unwrap_err();
        assert!(err.to_string().contains("shard count 2 vs 3"), "{err}");
        let err = shards(vec![shard(1, 3, 10.0), shard(1, 3, 10.0)], false).unwrap_err();
        assert!(err.to_string().contains("are both shard 1/3"), "{err}");
        let err = shards(vec![shard(0, 3, 10.0), shard(2, 3, 10.0)], false).unwrap_err();
        assert!(err.to_string().contains("missing 1"), "{err}");
        assert!(shards(vec![shard(0, 3, 10.0), shard(2, 3, 10.0)], true).is_ok());
        let err = shards(vec![shard(0, 1, 10.0)], false).unwrap_err();
        assert!(matches!(err, MergeError::NotShard(_)), "{err}");
        assert!(matches!(shards(vec![], false), Err(MergeError::Empty)));
    }
}
