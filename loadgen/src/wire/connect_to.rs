//! `--connect-to HOST:PORT:ADDRESS:PORT`: requests for one host and port go to another address,
//! as oha's and curl's option of the same purpose; the URL's host stays in the Host header and
//! in TLS's server name (SNI) and certificate check.

use std::net::{SocketAddr, ToSocketAddrs};

use serde::{Serialize, Serializer};

/// One `--connect-to` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectTo {
    /// The text given, for the result.
    pub text: String,
    pub host: String,
    pub port: u16,
    pub to: SocketAddr,
}

impl Serialize for ConnectTo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

/// A `--connect-to` that is not `HOST:PORT:ADDRESS:PORT`, or whose address does not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --connect-to '{0}': {1}")]
pub struct ConnectToError(pub String, pub &'static str);

impl ConnectTo {
    /// Parses `HOST:PORT:ADDRESS:PORT` (IPv6 in brackets, like `[::1]`).
    pub fn parse(text: &str) -> Result<ConnectTo, ConnectToError> {
        let err = |why| ConnectToError(text.to_string(), why);
        let shape = "expected HOST:PORT:ADDRESS:PORT, like api.openai.com:443:127.0.0.1:8443";
        let (host, rest) = host_part(text).ok_or_else(|| err(shape))?;
        let (port, rest) = rest.split_once(':').ok_or_else(|| err(shape))?;
        let (to_host, rest) = host_part(rest).ok_or_else(|| err(shape))?;
        let port: u16 = port.parse().map_err(|_| err(shape))?;
        let to_port: u16 = rest.parse().map_err(|_| err(shape))?;
        if host.is_empty() || to_host.is_empty() {
            return Err(err(shape));
        }
        let to = format!("{to_host}:{to_port}")
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| err("its address does not resolve"))?;
        Ok(ConnectTo {
            text: text.to_string(),
            host: host
                .trim_matches(|c| c == '[' || c == ']')
                .to_ascii_lowercase(),
            port,
            to,
        })
    }

    /// The address for `host` and `port`, if this rule covers them.
    pub fn covers(&self, host: &str, port: u16) -> bool {
        self.port == port && self.host.eq_ignore_ascii_case(host)
    }
}

/// The address `rules` send `host` and `port` to, if any covers them.
pub fn address_under(rules: &[ConnectTo], host: &str, port: u16) -> Option<SocketAddr> {
    rules.iter().find(|p| p.covers(host, port)).map(|p| p.to)
}

/// Splits `host:rest`, where the host may be an IPv6 address in brackets.
fn host_part(text: &str) -> Option<(&str, &str)> {
    if text.starts_with('[') {
        let end = text.find(']')?;
        let rest = text[end + 1..].strip_prefix(':')?;
        Some((&text[..=end], rest))
    } else {
        text.split_once(':')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_addresses_ipv6_included() {
        let rule = ConnectTo::parse("API.openai.com:443:127.0.0.1:8443").unwrap();
        assert_eq!(rule.host, "api.openai.com");
        assert_eq!(rule.port, 443);
        assert_eq!(rule.to, "127.0.0.1:8443".parse().unwrap());
        assert!(rule.covers("api.OpenAI.com", 443));
        assert!(!rule.covers("api.openai.com", 80));

        let six = ConnectTo::parse("[::1]:80:[::1]:9000").unwrap();
        assert_eq!(six.host, "::1");
        assert_eq!(six.to, "[::1]:9000".parse().unwrap());
        assert_eq!(
            address_under(&[rule, six], "::1", 80),
            "[::1]:9000".parse().ok()
        );
    }

    #[test]
    fn bad_rules_say_what_was_expected() {
        for bad in [
            "example.com:443",
            "example.com:443:127.0.0.1",
            "example.com:x:127.0.0.1:80",
            ":443:127.0.0.1:80",
            "example.com:443:127.0.0.1:99999",
        ] {
            let err = ConnectTo::parse(bad).unwrap_err();
            assert!(
                err.to_string().contains("HOST:PORT:ADDRESS:PORT"),
                "{bad}: {err}"
            );
        }
    }
}
