//! Where requests go and what they carry: a target resolved once (`Target`), the request every
//! exchange sends (`RequestSpec`), and the parsing of both from URLs, headers and bodies.

use std::net::ToSocketAddrs;

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use serde::Serialize;

use crate::model::target::Target;

/// A target or a request the generator cannot use. Each message says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("invalid --scenario '{0}': expected chat or chat-stream")]
    Scenario(String),
    #[error("cannot read the body file {0}: {1}")]
    BodyFile(String, std::io::Error),
    #[error("invalid --body: expected a JSON object (or @FILE holding one): {0}")]
    Body(String),
    #[error("invalid --header '{0}': expected 'Name: value'")]
    Header(String),
    #[error("invalid target '{0}': expected http://HOST:PORT/PATH or https://HOST:PORT/PATH, like http://127.0.0.1:8080/v1/chat/completions")]
    Url(String),
    #[error("cannot resolve target '{0}': {1}")]
    Resolve(String, String),
}

impl Target {
    /// The URL's host, without its port or an IPv6 address's brackets: TLS's server name.
    pub fn host(&self) -> &str {
        host_and_port(&self.authority).0
    }
}

/// Splits `host[:port]` (IPv6 in brackets); the port is `None` when not given.
fn host_and_port(authority: &str) -> (&str, Option<u16>) {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, after)) => (host, after.strip_prefix(':').and_then(|p| p.parse().ok())),
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (authority, None),
        },
        _ => (authority, None),
    }
}

/// What each request carries.
#[derive(Debug, Clone, Serialize)]
pub struct RequestSpec {
    /// `chat`, `chat-stream`, or `body` for a user-given body.
    pub scenario: String,
    pub stream: bool,
    /// In results, the body's CRC-32 (so shards of different bodies are not merged).
    #[serde(rename = "body_crc32", serialize_with = "crc32")]
    pub body: Bytes,
    /// Output tokens the body asks for, when known (for validation).
    pub max_tokens: Option<u64>,
    #[serde(serialize_with = "headers_as_text")]
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

fn crc32<S: serde::Serializer>(body: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u32(crc32fast::hash(body))
}

fn headers_as_text<S: serde::Serializer>(
    headers: &[(HeaderName, HeaderValue)],
    s: S,
) -> Result<S::Ok, S::Error> {
    let text: Vec<String> = headers
        .iter()
        .map(|(n, v)| format!("{n}: {}", v.to_str().unwrap_or("<binary>")))
        .collect();
    text.serialize(s)
}

/// The path methods of a Gemini and a Bedrock stream: a target with one streams whatever its
/// body says.
const STREAM_METHODS: [&str; 2] = [":streamGenerateContent", "/converse-stream"];

/// The path methods of a Gemini and a Bedrock answer that does not stream: a target with one
/// answers whole whatever its body says.
const WHOLE_METHODS: [&str; 2] = [":generateContent", "/converse"];

/// True for a URL or path that streams whatever its body says (Gemini, Bedrock).
pub(crate) fn streams_by_path(url: &str) -> bool {
    STREAM_METHODS.iter().any(|m| url.contains(m))
}

/// Whether a URL's path says its answer streams (Gemini's and Bedrock's methods, whatever the
/// body says); `None` for the other APIs, whose body says.
fn path_streams(url: &str) -> Option<bool> {
    let path = url.split('?').next().unwrap_or(url);
    if STREAM_METHODS.iter().any(|m| path.ends_with(m)) {
        Some(true)
    } else if WHOLE_METHODS.iter().any(|m| path.ends_with(m)) {
        Some(false)
    } else {
        None
    }
}

/// What each request of a run to `urls` carries: a scenario's body, or the user's. It streams
/// when its body says `"stream": true`, or when a URL says so in its path (Gemini, Bedrock);
/// when every URL's path says (Gemini's `:generateContent`, Bedrock's `/converse` answer whole),
/// the paths alone decide, so `--scenario chat-stream` to such a route reads a whole answer.
pub(crate) fn request_spec(
    scenario: Option<&str>,
    body: Option<&str>,
    headers: &[String],
    model: &str,
    max_tokens: u64,
    urls: &[&str],
) -> Result<RequestSpec, SpecError> {
    let mut spec = body_spec(scenario, body, headers, model, max_tokens)?;
    let by_path: Option<Vec<bool>> = urls.iter().map(|url| path_streams(url)).collect();
    match by_path {
        Some(streams) if !streams.is_empty() => spec.stream = streams.contains(&true),
        _ => spec.stream |= urls.iter().any(|url| streams_by_path(url)),
    }
    Ok(spec)
}

fn body_spec(
    scenario: Option<&str>,
    body: Option<&str>,
    headers: &[String],
    model: &str,
    max_tokens: u64,
) -> Result<RequestSpec, SpecError> {
    let headers = headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(body) = body {
        let bytes = match body.strip_prefix('@') {
            Some(path) => std::fs::read(path).map_err(|e| SpecError::BodyFile(path.into(), e))?,
            None => body.as_bytes().to_vec(),
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| SpecError::Body(e.to_string()))?;
        let object = value
            .as_object()
            .ok_or_else(|| SpecError::Body("not an object".into()))?;
        let stream = object
            .get("stream")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let max_tokens = ["max_completion_tokens", "max_tokens"]
            .iter()
            .find_map(|k| object.get(*k).and_then(|v| v.as_u64()));
        return Ok(RequestSpec {
            scenario: "body".into(),
            stream,
            body: Bytes::from(bytes),
            max_tokens,
            headers,
        });
    }
    let scenario = scenario.unwrap_or("chat");
    let stream = match scenario {
        "chat" => false,
        "chat-stream" => true,
        other => return Err(SpecError::Scenario(other.to_string())),
    };
    let mut body = serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": max_tokens,
    });
    if stream {
        body["stream"] = true.into();
        body["stream_options"] = serde_json::json!({"include_usage": true});
    }
    Ok(RequestSpec {
        scenario: scenario.to_string(),
        stream,
        body: Bytes::from(body.to_string()),
        max_tokens: Some(max_tokens),
        headers,
    })
}

pub(crate) fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), SpecError> {
    let err = || SpecError::Header(text.to_string());
    let (name, value) = text.split_once(':').ok_or_else(err)?;
    let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| err())?;
    let value = HeaderValue::from_str(value.trim()).map_err(|_| err())?;
    Ok((name, value))
}

/// Parses and resolves a `/metrics` URL (the path defaults to `/metrics`).
pub(crate) fn parse_metrics_url(url: &str) -> Result<Target, SpecError> {
    let mut target = parse_target(url)?;
    let rest = url
        .trim_start_matches("http://")
        .trim_start_matches("https://");
    if !rest.contains('/') {
        target.path = "/metrics".into();
    }
    Ok(target)
}

/// Parses and resolves `http://HOST[:PORT][/PATH]` or `https://…`; the path defaults to the
/// chat route.
pub fn parse_target(url: &str) -> Result<Target, SpecError> {
    parse_target_via(url, &[])
}

/// [`parse_target`], where `--connect-to` rules (`rules`) name the address of a host and port
/// instead of the resolver.
pub fn parse_target_via(
    url: &str,
    rules: &[crate::wire::connect_to::ConnectTo],
) -> Result<Target, SpecError> {
    let err = || SpecError::Url(url.to_string());
    let (rest, tls) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
        (Some(rest), _) => (rest, false),
        (_, Some(rest)) => (rest, true),
        _ => return Err(err()),
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    if authority.is_empty() {
        return Err(err());
    }
    let path = if path.is_empty() || path == "/" {
        "/v1/chat/completions"
    } else {
        path
    };
    let (host, port) = host_and_port(authority);
    if host.is_empty() || (authority.starts_with('[') && !authority.contains(']')) {
        return Err(err());
    }
    let port = port.unwrap_or(if tls { 443 } else { 80 });
    let resolved = match crate::wire::connect_to::address_under(rules, host, port) {
        Some(address) => address,
        None => {
            let lookup = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            lookup
                .to_socket_addrs()
                .map_err(|e| SpecError::Resolve(url.to_string(), e.to_string()))?
                .next()
                .ok_or_else(|| SpecError::Resolve(url.to_string(), "no address".into()))?
        }
    };
    Ok(Target {
        url: url.to_string(),
        authority: authority.to_string(),
        path: path.to_string(),
        resolved,
        tls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_once_with_a_default_path() {
        let t = parse_target("http://127.0.0.1:8080").unwrap();
        assert_eq!(t.path, "/v1/chat/completions");
        assert_eq!(t.resolved, "127.0.0.1:8080".parse().unwrap());
        let t = parse_target("http://localhost:9/v1/messages").unwrap();
        assert_eq!(t.path, "/v1/messages");
        assert!(t.resolved.ip().is_loopback());
        let t = parse_target("http://[::1]:8081/x").unwrap();
        assert_eq!(t.resolved, "[::1]:8081".parse().unwrap());
        assert_eq!(t.host(), "::1");
        assert!(!t.tls);
        for bad in ["127.0.0.1:80", "ftp://x", "http://", "http://[::1:80/"] {
            assert!(matches!(parse_target(bad), Err(SpecError::Url(_))), "{bad}");
        }
    }

    #[test]
    fn gemini_and_bedrock_paths_decide_whether_the_answer_streams() {
        let spec = |scenario: &str, urls: &[&str]| {
            request_spec(Some(scenario), None, &[], "m", 16, urls)
                .unwrap()
                .stream
        };
        let gemini = "http://h/v1beta/models/g:generateContent";
        let gemini_stream = "http://h/v1beta/models/g:streamGenerateContent?alt=sse";
        let bedrock = "http://h/model/anthropic.claude-v2:1/converse";
        let bedrock_stream = "http://h/model/m/converse-stream";
        for url in [gemini, bedrock] {
            assert!(
                !spec("chat-stream", &[url]),
                "{url}: whole whatever the body says"
            );
        }
        for url in [gemini_stream, bedrock_stream] {
            assert!(spec("chat", &[url]), "{url}");
        }
        assert!(spec("chat", &[gemini, gemini_stream]));
        let chat = "http://h/v1/chat/completions";
        assert!(spec("chat-stream", &[chat]) && !spec("chat", &[chat]));
        assert!(
            spec("chat-stream", &[chat, gemini]),
            "a route of the body's"
        );
    }

    #[test]
    fn https_targets_default_to_443_and_pins_replace_the_resolver() {
        let t = parse_target("https://localhost/v1/messages").unwrap();
        assert!(t.tls);
        assert_eq!(t.host(), "localhost");
        assert_eq!(t.resolved.port(), 443);
        // A name nobody resolves, pinned: no lookup is made.
        let rules =
            [
                crate::wire::connect_to::ConnectTo::parse("api.example.invalid:443:127.0.0.1:8443")
                    .unwrap(),
            ];
        let t = parse_target_via("https://api.example.invalid", &rules).unwrap();
        assert_eq!(t.resolved, "127.0.0.1:8443".parse().unwrap());
        assert_eq!(t.authority, "api.example.invalid");
        assert!(matches!(
            parse_target_via("https://api.example.invalid:8443", &rules),
            Err(SpecError::Resolve(..))
        ));
    }
}
