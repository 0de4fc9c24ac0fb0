//! Azure OpenAI's endpoints: the required `api-version`, the
//! `api-key` header, and Azure's own error bodies (`{"error":{"code":"429","message":…}}`).
//! The answers are OpenAI's, with Azure's content filter verdicts on chat completions
//! (`catalog::Dialect::Azure`).

use hyper::{StatusCode, Uri};

use crate::error_body::Words;
use crate::rejection::Rejection;

/// Azure refuses a request without `api-version`, except on its versionless `/openai/v1/`
/// endpoints.
pub fn check_version(uri: &Uri) -> Result<(), Rejection> {
    if uri.path().starts_with("/openai/v1/") {
        return Ok(());
    }
    let versioned = uri.query().is_some_and(|query| {
        query.split('&').any(|pair| {
            pair.strip_prefix("api-version=")
                .is_some_and(|v| !v.is_empty())
        })
    });
    if versioned {
        Ok(())
    } else {
        Err(error(StatusCode::NOT_FOUND, "404", "Resource not found"))
    }
}

/// Azure's error body: a string `code` and a `message`, no `type`.
pub fn error(status: StatusCode, code: &'static str, message: &str) -> Rejection {
    Rejection::in_words(status, Words::azure(code, message))
}

/// Azure's 401 for a missing or wrong `api-key`.
pub fn unauthorized() -> Rejection {
    error(
        StatusCode::UNAUTHORIZED,
        "401",
        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to \
         provide a valid key for an active subscription and use a correct regional API endpoint \
         for your resource.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_required_but_on_the_versionless_paths() {
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        let path = "/openai/deployments/d/chat/completions";
        assert!(check_version(&uri(&format!("{path}?api-version=2024-10-21"))).is_ok());
        assert!(check_version(&uri(&format!("{path}?x=1&api-version=2024-10-21"))).is_ok());
        let missing = check_version(&uri(path)).unwrap_err();
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert!(check_version(&uri(&format!("{path}?api-version="))).is_err());
        assert!(check_version(&uri("/openai/v1/chat/completions")).is_ok());
    }
}
