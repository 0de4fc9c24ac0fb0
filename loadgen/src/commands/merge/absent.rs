//! The shards a merge has no result of, and why (`--absent I:WHY`): a runner that collected the
//! shards from an orchestrator knows which task failed or never started, and says so; the merged
//! result then lists every missing shard with its reason, or "no result given".

use std::collections::BTreeMap;

use anyhow::bail;

use crate::results::shards::AbsentShard;

/// Why each shard is absent, as given.
#[derive(Debug, Clone, Default)]
pub struct Absent {
    why: BTreeMap<u64, String>,
}

impl Absent {
    /// Parses every `--absent I:WHY`.
    pub fn parse(given: &[String]) -> anyhow::Result<Absent> {
        let mut why = BTreeMap::new();
        for text in given {
            let parsed = text
                .split_once(':')
                .and_then(|(index, reason)| {
                    Some((index.trim().parse::<u64>().ok()?, reason.trim()))
                })
                .filter(|(_, reason)| !reason.is_empty());
            let Some((index, reason)) = parsed else {
                bail!("invalid --absent '{text}': expected I:WHY, like '2:task failed: exit 1'");
            };
            if why.insert(index, reason.to_string()).is_some() {
                bail!("--absent {index} is given twice");
            }
        }
        Ok(Absent { why })
    }

    /// Every shard of `count` not in `merged`, with its reason; refuses a reason given for a
    /// shard that was merged, or one past the plan's count.
    pub fn list(&self, count: u64, merged: &[u64]) -> anyhow::Result<Vec<AbsentShard>> {
        if let Some(index) = self.why.keys().find(|i| merged.contains(i) || **i >= count) {
            if *index >= count {
                bail!(
                    "--absent {index}: the plan has {count} shards (0 to {})",
                    count - 1
                );
            }
            bail!("--absent {index}: shard {index}'s result was given and merged");
        }
        Ok((0..count)
            .filter(|i| !merged.contains(i))
            .map(|index| AbsentShard {
                index,
                why: self
                    .why
                    .get(&index)
                    .cloned()
                    .unwrap_or_else(|| "no result given".into()),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_shard_is_listed_with_its_reason() {
        let absent = Absent::parse(&["2: task failed: exit 1".into()]).unwrap();
        let listed = absent.list(4, &[0, 3]).unwrap();
        assert_eq!(
            listed,
            vec![
                AbsentShard {
                    index: 1,
                    why: "no result given".into()
                },
                AbsentShard {
                    index: 2,
                    why: "task failed: exit 1".into()
                },
            ]
        );
    }

    #[test]
    fn bad_reasons_are_refused() {
        for bad in ["2", "x:why", "2:", ":why"] {
            assert!(Absent::parse(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(Absent::parse(&["1:a".into(), "1:b".into()]).is_err());
        let absent = Absent::parse(&["1:gone".into()]).unwrap();
        assert!(absent.list(4, &[1]).is_err(), "merged");
        assert!(absent.list(1, &[0]).is_err(), "past the count");
    }
}
