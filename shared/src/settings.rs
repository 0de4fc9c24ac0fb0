//! Reading settings: what the mock's `--config` and loadgen's `--preset` share, and the
//! environment's former names read as the new ones.

use serde::{Deserialize, Deserializer};

/// Each `(former, now)` variable of the environment: `former`'s value set as `now` when `now` is
/// not set, so a renamed variable is still read. Called first in `main`, before the command line
/// is parsed, while the process has one thread.
pub fn read_former_names(names: &[(&str, &str)]) {
    for (former, now) in names {
        if std::env::var_os(now).is_none() {
            if let Some(value) = std::env::var_os(former) {
                std::env::set_var(now, value);
            }
        }
    }
}

/// Accepts a string or a number where a flag takes text, so a TOML file may write `rate = 5000`
/// or `rate = "5k"`, `tokens = 16` or `tokens = "uniform:10..100"`.
pub fn text_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum TextOrNumber {
        Text(String),
        Integer(u64),
        Float(f64),
    }
    Ok(Option::<TextOrNumber>::deserialize(d)?.map(|v| match v {
        TextOrNumber::Text(s) => s,
        TextOrNumber::Integer(n) => n.to_string(),
        TextOrNumber::Float(x) => x.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Sample {
        #[serde(default, deserialize_with = "text_or_number")]
        v: Option<String>,
    }

    #[test]
    fn text_integers_and_floats_become_text() {
        let read = |t: &str| serde_json::from_str::<Sample>(t).unwrap().v;
        assert_eq!(read(r#"{"v":"5k"}"#).as_deref(), Some("5k"));
        assert_eq!(read(r#"{"v":1048576}"#).as_deref(), Some("1048576"));
        assert_eq!(read(r#"{"v":2.5}"#).as_deref(), Some("2.5"));
        assert_eq!(read(r#"{}"#), None);
    }
}
