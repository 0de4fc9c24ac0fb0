//! `--require-api-key`: requests without a key, or with another, get each provider's 401; and
//! the hash of a request's key that `--record` keeps.

use hyper::header::{HeaderMap, AUTHORIZATION};
use hyper::StatusCode;

use crate::admission::error_body::Words;
use crate::admission::rejection::Rejection;
use crate::config::Provider;

/// The API key a request carries: OpenAI's `Authorization: Bearer KEY`; Anthropic's
/// `x-api-key: KEY`, or a bearer token as the API also takes (recent SDKs send that).
pub fn key(headers: &HeaderMap, provider: Provider) -> Option<&str> {
    let bearer = || {
        headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
    };
    match provider {
        Provider::OpenAi => bearer(),
        // Bedrock: the access key id of a SigV4 signature (`Credential=AKID/date/…`; the
        // signature itself is not checked), or a Bedrock API key as a bearer token.
        Provider::Bedrock => headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once("Credential="))
            .and_then(|(_, rest)| rest.split('/').next())
            .or_else(bearer),
        // Gemini: `x-goog-api-key: KEY`, as Google's SDKs send it.
        Provider::Gemini => headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()),
        // Azure OpenAI: `api-key: KEY`, or a bearer token (Entra ID).
        Provider::Azure => headers
            .get("api-key")
            .and_then(|v| v.to_str().ok())
            .or_else(bearer),
        Provider::Anthropic => headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .or_else(bearer),
    }
}

/// The top 32 bits of the FNV-1a 64 hash of the request's API key (`authorization: Bearer`,
/// `x-api-key`, `x-goog-api-key`, Azure's `api-key`, or as `provider` carries it), if it
/// has one.
pub fn key_hash(headers: &HeaderMap, provider: Provider) -> Option<u32> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let key = key(headers, provider)
        .or_else(|| {
            header(AUTHORIZATION.as_str())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim)
        })
        .or_else(|| header("x-api-key"))
        .or_else(|| header("x-goog-api-key"))
        .or_else(|| header("api-key"))
        .filter(|k| !k.is_empty())?;
    Some((fnv1a_64(key.as_bytes()) >> 32) as u32)
}

fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Checks the request's key against `required`, one key or several separated by commas
/// (nothing to check when `None`).
pub fn check(
    required: Option<&str>,
    headers: &HeaderMap,
    provider: Provider,
) -> Result<(), Rejection> {
    let Some(required) = required else {
        return Ok(());
    };
    let given = key(headers, provider);
    if given.is_some_and(|given| required.split(',').any(|k| k.trim() == given)) {
        return Ok(());
    }
    Err(refusal(provider, given))
}

/// What `provider` answers a request without the right key with: `given` is its key, if any.
fn refusal(provider: Provider, given: Option<&str>) -> Rejection {
    match (provider, given) {
        (Provider::Azure, _) => Rejection::in_words(
            StatusCode::UNAUTHORIZED,
            Words::azure(
                "401",
                "Access denied due to invalid subscription key or wrong API endpoint. Make sure \
                 to provide a valid key for an active subscription and use a correct regional \
                 API endpoint for your resource.",
            ),
        ),
        (Provider::Bedrock, None) => Rejection::with_status(
            StatusCode::FORBIDDEN,
            "Missing Authentication Token",
            "",
            None,
        ),
        (Provider::Bedrock, Some(_)) => Rejection::with_status(
            StatusCode::FORBIDDEN,
            "The security token included in the request is invalid.",
            "",
            None,
        ),
        (Provider::Gemini, None) => Rejection::with_status(
            StatusCode::FORBIDDEN,
            "Method doesn't allow unregistered callers (callers without established identity).              Please use API Key or other form of API consumer identity to call this API.",
            "",
            None,
        ),
        (Provider::Gemini, Some(_)) => Rejection::bad_request(
            "API key not valid. Please pass a valid API key.",
            None,
            None,
        ),
        (Provider::OpenAi, None) => Rejection::with_status(
            StatusCode::UNAUTHORIZED,
            "You didn't provide an API key. You need to provide your API key in an \
             Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            "invalid_request_error",
            None,
        ),
        (Provider::OpenAi, Some(key)) => Rejection::with_status(
            StatusCode::UNAUTHORIZED,
            format!("Incorrect API key provided: {}.", redact(key)),
            "invalid_request_error",
            Some("invalid_api_key"),
        ),
        (Provider::Anthropic, _) => Rejection::with_status(
            StatusCode::UNAUTHORIZED,
            "invalid x-api-key",
            "authentication_error",
            None,
        )
        .anthropic(),
    }
}

/// A key as OpenAI echoes it: the first and last few characters.
fn redact(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn keys_are_checked_per_provider() {
        let mut h = HeaderMap::new();
        assert!(check(None, &h, Provider::OpenAi).is_ok());
        let missing = check(Some("sk-good"), &h, Provider::OpenAi).unwrap_err();
        assert_eq!(missing.status, StatusCode::UNAUTHORIZED);
        h.insert(
            AUTHORIZATION,
            HeaderValue::from_static("Bearer sk-wrong-key-123"),
        );
        let wrong = check(Some("sk-good"), &h, Provider::OpenAi).unwrap_err();
        assert_eq!(wrong.code, Some("invalid_api_key"));
        assert!(
            wrong.message.contains("sk-*********-123"),
            "{}",
            wrong.message
        );
        h.insert(AUTHORIZATION, HeaderValue::from_static("Bearer sk-good"));
        assert!(check(Some("sk-good"), &h, Provider::OpenAi).is_ok());
        // Anthropic takes a bearer token too, but x-api-key wins when both are there.
        assert!(check(Some("sk-good"), &h, Provider::Anthropic).is_ok());
        h.insert("x-api-key", HeaderValue::from_static("sk-other"));
        assert!(check(Some("sk-good"), &h, Provider::Anthropic).is_err());
        h.insert("x-api-key", HeaderValue::from_static("sk-good"));
        assert!(check(Some("sk-good"), &h, Provider::Anthropic).is_ok());
        // Several keys: any one of them will do.
        assert!(check(Some("sk-a, sk-good"), &h, Provider::Anthropic).is_ok());
        assert!(check(Some("sk-a,sk-b"), &h, Provider::Anthropic).is_err());
    }

    #[test]
    fn keys_hash_to_the_top_of_fnv1a_64() {
        // FNV-1a 64 of "a" is af63dc4c8601ec8c.
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        let mut headers = HeaderMap::new();
        assert_eq!(key_hash(&headers, Provider::OpenAi), None);
        headers.insert("x-api-key", HeaderValue::from_static("a"));
        assert_eq!(key_hash(&headers, Provider::OpenAi), Some(0xaf63_dc4c));
        headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer a"));
        assert_eq!(key_hash(&headers, Provider::Gemini), Some(0xaf63_dc4c));
    }
}
