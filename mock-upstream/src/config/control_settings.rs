//! `--name`, `--record` and `--control` as settings: the name every answer carries, how many
//! arrivals are kept, and the control listener's address (loopback only).

use std::net::SocketAddr;

use super::{parse_listen, ConfigError};

/// Most arrivals `--record` keeps (about 120 bytes each, allocated at start-up).
pub const MAX_RECORD: usize = 1_000_000;

/// `--name`: visible ASCII (a header value), 1 to 128 characters.
pub(super) fn name(v: Option<String>) -> Result<Option<String>, ConfigError> {
    match v {
        None => Ok(None),
        Some(name)
            if (1..=128).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            Ok(Some(name))
        }
        Some(name) => Err(ConfigError::Name(name)),
    }
}

/// `--record`: 0 (off) to [`MAX_RECORD`].
pub(super) fn record(v: Option<usize>) -> Result<usize, ConfigError> {
    match v.unwrap_or(0) {
        n if n <= MAX_RECORD => Ok(n),
        n => Err(ConfigError::Record(n)),
    }
}

/// `--control`: a loopback address, the port 0 for any free one.
pub(super) fn control(v: Option<&str>) -> Result<Option<SocketAddr>, ConfigError> {
    let Some(text) = v else {
        return Ok(None);
    };
    let err = || ConfigError::Control(text.to_string());
    let addr = parse_listen(text).map_err(|_| err())?;
    if !addr.ip().is_loopback() {
        return Err(err());
    }
    Ok(Some(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_listens_on_loopback_only() {
        for good in ["127.0.0.1:9090", "[::1]:0", "127.0.0.2:1"] {
            assert!(control(Some(good)).unwrap().is_some(), "{good}");
        }
        for bad in ["0.0.0.0:9090", "[::]:9090", "10.0.0.1:80", "nowhere"] {
            assert!(control(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(control(None).unwrap(), None);
    }

    #[test]
    fn names_are_header_values_and_records_are_bounded() {
        assert_eq!(name(Some("a-1".into())).unwrap().as_deref(), Some("a-1"));
        for bad in ["", "a b", "é", &"x".repeat(129)] {
            assert!(name(Some(bad.to_string())).is_err(), "{bad:?}");
        }
        assert_eq!(record(None).unwrap(), 0);
        assert!(record(Some(MAX_RECORD + 1)).is_err());
    }
}
