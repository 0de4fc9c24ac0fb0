//! `--require-api-key`: requests without the key, or with another, get each provider's 401.

use hyper::header::{HeaderMap, AUTHORIZATION};
use hyper::StatusCode;

use crate::faults::Provider;
use crate::rejection::Rejection;

/// Checks the request's key against `required` (nothing to check when `None`): OpenAI reads
/// `Authorization: Bearer KEY`, Anthropic `x-api-key: KEY`.
pub fn check(
    required: Option<&str>,
    headers: &HeaderMap,
    provider: Provider,
) -> Result<(), Rejection> {
    let Some(required) = required else {
        return Ok(());
    };
    match provider {
        Provider::OpenAi => {
            let given = headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim);
            match given {
                Some(key) if key == required => Ok(()),
                None => Err(Rejection::with_status(
                    StatusCode::UNAUTHORIZED,
                    "You didn't provide an API key. You need to provide your API key in an \
                     Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                    "invalid_request_error",
                    None,
                )),
                Some(key) => Err(Rejection::with_status(
                    StatusCode::UNAUTHORIZED,
                    format!("Incorrect API key provided: {}.", redact(key)),
                    "invalid_request_error",
                    Some("invalid_api_key"),
                )),
            }
        }
        Provider::Anthropic => {
            let given = headers.get("x-api-key").and_then(|v| v.to_str().ok());
            if given == Some(required) {
                Ok(())
            } else {
                Err(Rejection::with_status(
                    StatusCode::UNAUTHORIZED,
                    "invalid x-api-key",
                    "authentication_error",
                    None,
                )
                .anthropic())
            }
        }
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
        assert!(check(Some("sk-good"), &h, Provider::Anthropic).is_err());
        h.insert("x-api-key", HeaderValue::from_static("sk-good"));
        assert!(check(Some("sk-good"), &h, Provider::Anthropic).is_ok());
    }
}
