//! Presets: every command's flags merged over its `--preset` file (the one place a preset is
//! read). One merge for every command: the preset is read as the command's options, and each
//! flag given on the command line takes the place of the preset's key (a `--header` replaces
//! the preset's header of the same name and adds to the others).

use std::path::Path;

use anyhow::Context as _;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A preset file that cannot be used: the message names the file and what was wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PresetError(pub String);

/// The preset keys that name files: a relative path is found beside the preset, so a preset
/// and its corpus move together.
const FILE_KEYS: [&str; 4] = ["requests-file", "trace", "cacert", "sessions"];

/// Keys renamed, as (former name, name): a preset that still uses the former name is read as
/// if it used the new one.
const FORMER_KEYS: [(&str, &str); 1] = [("pin", "cores")];

/// `table`'s keys under their former names renamed, unless the new name is there too.
fn read_former_keys(table: &mut toml::Table) {
    for (former, now) in FORMER_KEYS {
        if !table.contains_key(now) {
            if let Some(value) = table.remove(former) {
                table.insert(now.to_string(), value);
            }
        }
    }
}

/// `flags` with those of the preset at `path` under them.
pub fn merged<T: Serialize + DeserializeOwned>(flags: T, path: &Path) -> anyhow::Result<T> {
    let invalid =
        |e: &dyn std::fmt::Display| PresetError(format!("invalid preset {}: {e}", path.display()));
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read preset {}", path.display()))?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| invalid(&e))?;
    anchor(&mut table, path);
    read_former_keys(&mut table);
    let preset: T = table.clone().try_into().map_err(|e| invalid(&e))?;
    // Invariant: options are structs of named fields, which serialise to a map.
    let Value::Object(mut under) = serde_json::to_value(&preset)? else {
        unreachable!("options serialise to a map")
    };
    if let Some(key) = table.keys().find(|k| !under.contains_key(*k)) {
        return Err(invalid(&format!("unknown field `{key}`")).into());
    }
    if let Value::Object(over) = serde_json::to_value(&flags)? {
        merge(&mut under, over);
    }
    Ok(serde_json::from_value(Value::Object(under)).map_err(|e| invalid(&e))?)
}

/// `T`'s flags with its preset under them, when `preset` names one.
pub fn over_preset<T: Serialize + DeserializeOwned>(
    flags: T,
    preset: Option<&Path>,
) -> anyhow::Result<T> {
    match preset {
        Some(path) => merged(flags, path),
        None => Ok(flags),
    }
}

/// Each flag that was given (not empty, not false) in place of the preset's key.
fn merge(under: &mut Map<String, Value>, over: Map<String, Value>) {
    for (key, value) in over {
        let given = match &value {
            Value::Null | Value::Bool(false) => false,
            Value::Array(items) => !items.is_empty(),
            _ => true,
        };
        if !given {
            continue;
        }
        if key == "header" {
            let texts = |v: Option<&Value>| -> Vec<String> {
                v.and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default()
            };
            let headers = merge_headers(texts(under.get(&key)), texts(Some(&value)));
            under.insert(key, headers.into());
        } else {
            under.insert(key, value);
        }
    }
}

/// The preset's relative file paths joined to the preset's folder.
fn anchor(table: &mut toml::Table, path: &Path) {
    let dir = path.parent().unwrap_or(Path::new("."));
    for key in FILE_KEYS {
        if let Some(toml::Value::String(file)) = table.get_mut(key) {
            if Path::new(file.as_str()).is_relative() {
                *file = dir.join(&*file).display().to_string();
            }
        }
    }
}

/// A preset's headers with the command line's added; a flag's header replaces the preset's
/// header of the same name.
pub(crate) fn merge_headers(preset: Vec<String>, flags: Vec<String>) -> Vec<String> {
    let name = |h: &str| {
        h.split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let mut out: Vec<String> = preset
        .into_iter()
        .filter(|p| !flags.iter().any(|f| name(f) == name(p)))
        .collect();
    out.extend(flags);
    out
}

/// A preset key written as text, a number or an array of them (`levels = [1, 4, 16]`), read
/// as text (an array joined with commas).
pub(crate) fn text_or_list<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Item {
        Text(String),
        Integer(u64),
        Float(f64),
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum TextOrList {
        One(Item),
        List(Vec<Item>),
    }
    let text = |item: Item| match item {
        Item::Text(s) => s,
        Item::Integer(n) => n.to_string(),
        Item::Float(x) => x.to_string(),
    };
    Ok(Option::<TextOrList>::deserialize(d)?.map(|v| match v {
        TextOrList::One(item) => text(item),
        TextOrList::List(items) => items.into_iter().map(text).collect::<Vec<_>>().join(","),
    }))
}

/// Stand-in targets for presets that leave the targets to the command line (nothing is sent
/// to them: plans only parse and resolve them).
pub(crate) const PLACEHOLDER: &str = "http://127.0.0.1:9/v1/chat/completions";
pub(crate) const PLACEHOLDER_GATEWAY: &str = "gateway=http://127.0.0.1:9/v1/chat/completions";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{CompareArgs, GatewayFlags, LoadArgs, RequestFlags, SweepArgs};

    fn preset(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("loadgen-merge-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn flags_win_over_the_profile_and_what_they_leave_unset_is_the_profiles() {
        let path = preset(
            "run",
            "rate = 5000\nduration = \"5s\"\nheader = [\"x-a: 1\", \"x-b: 2\"]\n\
             requests-file = \"corpus.jsonl\"\nhttp2 = true\n",
        );
        let flags = LoadArgs {
            duration: Some("9s".into()),
            request: RequestFlags {
                headers: vec!["X-B: 3".into()],
                ..RequestFlags::default()
            },
            ..LoadArgs::default()
        };
        let merged = merged(flags, &path).unwrap();
        assert_eq!(merged.rate.as_deref(), Some("5000"));
        assert_eq!(merged.duration.as_deref(), Some("9s"));
        assert_eq!(merged.request.headers, ["x-a: 1", "X-B: 3"]);
        assert!(merged.http2);
        assert_eq!(
            merged.requests_file.unwrap(),
            path.parent().unwrap().join("corpus.jsonl")
        );
    }

    #[test]
    fn a_commands_profile_takes_its_groups_keys_and_refuses_others() {
        let path = preset(
            "sweep",
            "levels = [1, 4]\ngateway = \"g=http://127.0.0.1:9/\"\ntrials = 2\nconnections = 8\n",
        );
        let flags = SweepArgs {
            compare: CompareArgs {
                targets: GatewayFlags {
                    direct: Some("http://127.0.0.1:9/".into()),
                    ..GatewayFlags::default()
                },
                ..CompareArgs::default()
            },
            ..SweepArgs::default()
        };
        let merged = merged(flags, &path).unwrap();
        assert_eq!(merged.levels.as_deref(), Some("1,4"));
        assert_eq!(merged.compare.targets.gateways, ["g=http://127.0.0.1:9/"]);
        assert_eq!(
            merged.compare.targets.direct.as_deref(),
            Some("http://127.0.0.1:9/")
        );
        assert_eq!(merged.compare.judge.trials, Some(2));
        assert_eq!(merged.compare.load.connections, Some(8));
        let path = preset("unknown", "levels = [1]\ncolour = 1\n");
        let err = merged_err(SweepArgs::default(), &path);
        assert!(err.contains("unknown field `colour`"), "{err}");
        let path = preset("other", "rounds = 5\n");
        assert!(merged_err(CompareArgs::default(), &path).contains("`rounds`"));
    }

    fn merged_err<T: Serialize + DeserializeOwned>(flags: T, path: &Path) -> String {
        match merged(flags, path) {
            Ok(_) => panic!("{} is refused", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn flag_headers_add_to_the_profiles_and_replace_the_same_name() {
        let merged = merge_headers(
            vec!["x-mock-tokens: 60".into(), "Authorization: Bearer a".into()],
            vec!["authorization: Bearer b".into(), "x-extra: 1".into()],
        );
        assert_eq!(
            merged,
            ["x-mock-tokens: 60", "authorization: Bearer b", "x-extra: 1"]
        );
    }
}
