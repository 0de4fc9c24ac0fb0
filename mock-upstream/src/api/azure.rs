//! Azure OpenAI's request side: the `api-version` its deployment paths require. The rest of
//! Azure is elsewhere: its `api-key` header in `crate::admission::auth`, its own error body in
//! `crate::admission::error_body`, and its answers (OpenAI's, with Azure's content filter verdicts on chat
//! completions, `catalog::Dialect::Azure`) and fixed headers in `crate::catalog`.

use hyper::{StatusCode, Uri};

use crate::admission::error_body::Words;
use crate::admission::rejection::Rejection;

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
        let words = Words::azure("404", "Resource not found");
        Err(Rejection::in_words(StatusCode::NOT_FOUND, words))
    }
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
