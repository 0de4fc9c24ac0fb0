//! HTTP/2 requests built once: each request of a template is a clone of its head and its
//! `x-gatebench-seq` value; its body is the template's, shared, not copied.

use bytes::Bytes;
use gatebench_shared::wire::SEQ_HEADER;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, TE,
    TRANSFER_ENCODING,
};
use hyper::{Method, Request, Uri};

use crate::model::target::Target;
use crate::wire::target::RequestSpec;

/// The parts of a run's HTTP/2 requests.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

impl RequestTemplate {
    /// `POST` of `spec`'s body to `path` on the target: the authority (`:authority`) is the
    /// URL's, or the user's `Host` header; a JSON content type unless the user gave one; the
    /// user's headers but those HTTP/2 forbids (RFC 9113, section 8.2.2), and the body's
    /// length.
    pub fn post_to(target: &Target, path: &str, spec: &RequestSpec) -> RequestTemplate {
        let scheme = if target.tls { "https" } else { "http" };
        let authority = spec
            .headers
            .iter()
            .find(|(n, _)| n == HOST)
            .and_then(|(_, v)| v.to_str().ok())
            .unwrap_or(&target.authority);
        let uri = Uri::builder()
            .scheme(scheme)
            .authority(authority)
            .path_and_query(path)
            .build()
            // A target's authority and path were checked when it was parsed.
            .unwrap_or_else(|_| Uri::from_static("/"));
        let mut headers = HeaderMap::with_capacity(spec.headers.len() + 3);
        if !spec.headers.iter().any(|(n, _)| n == CONTENT_TYPE) {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        // Headers the user's `Connection` names are that hop's only, as the header itself is.
        let listed: Vec<String> = spec
            .headers
            .iter()
            .filter(|(n, _)| n == CONNECTION)
            .filter_map(|(_, v)| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|n| n.trim().to_ascii_lowercase())
            .collect();
        for (name, value) in &spec.headers {
            if is_connection_specific(name, value)
                || listed.iter().any(|n| n == name.as_str())
                || name == HOST
                || name == CONTENT_LENGTH
            {
                continue;
            }
            headers.append(name.clone(), value.clone());
        }
        headers.insert(CONTENT_LENGTH, HeaderValue::from(spec.body.len()));
        RequestTemplate {
            uri,
            headers,
            body: spec.body.clone(),
        }
    }

    /// The head of request `seq`. Its number is sent as never indexed: a value each request
    /// changes would only churn both sides' HPACK tables.
    pub fn request(&self, seq: u64) -> Request<()> {
        let mut request = Request::new(());
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        let mut seq = HeaderValue::from(seq);
        seq.set_sensitive(true);
        request
            .headers_mut()
            .insert(HeaderName::from_static(SEQ_HEADER), seq);
        request
    }

    /// The body every request sends.
    pub fn body(&self) -> &Bytes {
        &self.body
    }
}

/// A header HTTP/2 forbids (RFC 9113, section 8.2.2): `te` is allowed as `trailers` only.
fn is_connection_specific(name: &HeaderName, value: &HeaderValue) -> bool {
    name == CONNECTION
        || name == TRANSFER_ENCODING
        || (name == TE && value != "trailers")
        || matches!(name.as_str(), "keep-alive" | "proxy-connection" | "upgrade")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(headers: &[(&'static str, &'static str)]) -> RequestSpec {
        RequestSpec {
            scenario: "chat".into(),
            stream: false,
            body: Bytes::from_static(b"{\"a\":1}"),
            max_tokens: None,
            headers: headers
                .iter()
                .map(|(n, v)| (HeaderName::from_static(n), HeaderValue::from_static(v)))
                .collect(),
        }
    }

    #[test]
    fn requests_carry_the_authority_the_headers_and_their_number() {
        let target =
            crate::wire::target::parse_target("https://localhost:8443/v1/chat/completions")
                .expect("loopback target");
        let template = RequestTemplate::post_to(
            &target,
            "/v1/messages",
            &spec(&[
                ("authorization", "Bearer k"),
                ("connection", "keep-alive, x-hop"),
                ("x-hop", "1"),
                ("te", "gzip"),
                ("content-length", "999"),
            ]),
        );
        let request = template.request(42);
        assert_eq!(request.method(), Method::POST);
        assert_eq!(
            request.uri().to_string(),
            "https://localhost:8443/v1/messages"
        );
        let headers = request.headers();
        assert_eq!(headers[SEQ_HEADER], "42");
        assert_eq!(headers[CONTENT_TYPE], "application/json");
        assert_eq!(headers["authorization"], "Bearer k");
        assert!(!headers.contains_key(CONNECTION));
        assert!(!headers.contains_key("x-hop"), "named by Connection");
        assert!(!headers.contains_key(TE), "te other than trailers");
        assert_eq!(headers[CONTENT_LENGTH], "7", "the body's, not the user's");
        assert!(headers[SEQ_HEADER].is_sensitive());
        assert_eq!(template.body().as_ref(), b"{\"a\":1}");
        assert_eq!(template.request(7).headers()[SEQ_HEADER], "7");
    }

    #[test]
    fn the_users_host_becomes_the_authority() {
        let target = crate::wire::target::parse_target("http://127.0.0.1:9/v1/chat/completions")
            .expect("loopback target");
        let template =
            RequestTemplate::post_to(&target, &target.path, &spec(&[("host", "api.openai.com")]));
        let request = template.request(0);
        assert_eq!(
            request.uri().authority().map(|a| a.as_str()),
            Some("api.openai.com")
        );
        assert!(!request.headers().contains_key(HOST));
    }
}
