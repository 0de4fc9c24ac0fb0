//! Azure OpenAI's endpoints: the required `api-version`, the
//! `api-key` header, and Azure's own error bodies (`{"error":{"code":"429","message":…}}`).
//! The answers are OpenAI's, with Azure's content filter verdicts on chat completions
//! (`catalog::Dialect::Azure`).

use hyper::{StatusCode, Uri};

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
    Rejection::with_status(status, message, "", Some(code)).azure()
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

/// Azure's answer to a fault of `status`.
pub fn fault(status: StatusCode) -> Rejection {
    let message = match status.as_u16() {
        429 => "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version \
                2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing \
                tier. Please retry after 1 second. Please go here: https://aka.ms/oai/quotaincrease \
                if you would like to further increase the default rate limit.",
        500 => "The server had an error while processing your request. Sorry about that!",
        503 => "The service is temporarily unable to process your request. Please try again later.",
        s if s >= 500 => "The server had an error processing your request.",
        _ => "The request was rejected (forced by the mock).",
    };
    let code: &'static str = match status.as_u16() {
        429 => "429",
        500 => "InternalServerError",
        503 => "ServiceUnavailable",
        _ => "BadRequest",
    };
    error(status, code, message)
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
