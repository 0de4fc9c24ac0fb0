//! Method and path to a route, without allocating.

use hyper::Method;

use crate::config::Provider;

/// Where a request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `POST /v1/chat/completions`.
    ChatCompletions,
    /// `POST /v1/messages` (Anthropic).
    Messages,
    /// `POST /v1/responses` (OpenAI Responses API).
    Responses,
    /// `POST /v1/embeddings`.
    Embeddings,
    /// `POST /v1/completions` (legacy).
    Completions,
    /// Azure OpenAI's endpoint of an OpenAI API: `/openai/deployments/{deployment}/chat/
    /// completions`, `…/completions`, `…/embeddings`, `/openai/responses`, and the versionless
    /// `/openai/v1/…` paths.
    Azure(AzureApi),
    /// `POST /v1beta/models/{model}:generateContent` (`stream` false) or
    /// `:streamGenerateContent` (true): Google's Gemini API (also under `/v1/models/`).
    Gemini { stream: bool },
    /// `POST /model/{modelId}/converse` (`stream` false) or `/converse-stream` (true): AWS
    /// Bedrock's Converse API.
    Bedrock { stream: bool },
    /// `GET /v1/models`.
    Models,
    /// `GET /v1/models/{id}`.
    Model(&'a str),
    /// `GET /health`.
    Health,
    /// `GET /metrics` (Prometheus text).
    Metrics,
    /// `GET /v1/gatebench/config`: the resolved configuration as TOML, for load generators to
    /// disclose.
    Config,
    /// `GET /v1/gatebench/clock`: the mock's wall clock, for load generators on several hosts
    /// to measure their clocks' offsets against one reference.
    Clock,
    /// `GET /v1/gatebench/record`: the last arrivals (`--record N`).
    Record,
    /// `/v1/gatebench/control` and `/v1/gatebench/control/reset`, any method: answered on the
    /// control listener only (`--control`); here, a 409 that says so.
    Control,
    /// A known path with the wrong method; `allow` is the method it takes.
    MethodNotAllowed { allow: &'static str },
    /// Anything else.
    NotFound,
}

impl Route<'_> {
    /// The short name an arrival on an API route is recorded under (`None` for the routes
    /// that are no API).
    pub fn api_name(&self) -> Option<&'static str> {
        Some(match self {
            Route::ChatCompletions => "chat",
            Route::Responses => "responses",
            Route::Messages => "messages",
            Route::Embeddings => "embeddings",
            Route::Completions => "completions",
            Route::Gemini { .. } => "gemini",
            Route::Bedrock { .. } => "bedrock",
            Route::Azure(_) => "azure",
            _ => return None,
        })
    }

    /// Whose shapes the route answers in (OpenAI's for the routes that are no API).
    pub fn provider(&self) -> Provider {
        match self {
            Route::Messages => Provider::Anthropic,
            Route::Azure(_) => Provider::Azure,
            Route::Gemini { .. } => Provider::Gemini,
            Route::Bedrock { .. } => Provider::Bedrock,
            _ => Provider::OpenAi,
        }
    }
}

/// The OpenAI APIs Azure OpenAI answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AzureApi {
    Chat,
    Completions,
    Embeddings,
    Responses,
}

/// The Azure OpenAI API at `path`, if any.
fn azure(path: &str) -> Option<AzureApi> {
    let rest = path.strip_prefix("/openai/")?;
    let api = match rest.strip_prefix("deployments/") {
        Some(deployment) => deployment.split_once('/')?.1,
        None => rest.strip_prefix("v1/").unwrap_or(rest),
    };
    match api {
        "chat/completions" => Some(AzureApi::Chat),
        "completions" => Some(AzureApi::Completions),
        "embeddings" => Some(AzureApi::Embeddings),
        "responses" => Some(AzureApi::Responses),
        _ => None,
    }
}

/// The model a path names: Azure OpenAI's deployment (`/openai/deployments/{deployment}/…`),
/// Gemini's model (`/v1beta/models/{model}:…`, also under `/v1/models/`) or Bedrock's model id
/// (`/model/{modelId}/converse…`, as the SDK writes it, `%3A` and all); the model of a request
/// whose body names none.
pub fn model_in_path(path: &str) -> Option<&str> {
    let model = if let Some(rest) = path.strip_prefix("/openai/deployments/") {
        rest.split_once('/')?.0
    } else if let Some(rest) = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))
    {
        rest.split_once(':')?.0
    } else {
        path.strip_prefix("/model/")?.split_once('/')?.0
    };
    (!model.is_empty()).then_some(model)
}

/// The Bedrock Converse route at `path`, if any.
fn bedrock(path: &str) -> Option<Route<'static>> {
    let (model, method) = path.strip_prefix("/model/")?.split_once('/')?;
    match method {
        _ if model.is_empty() => None,
        "converse" => Some(Route::Bedrock { stream: false }),
        "converse-stream" => Some(Route::Bedrock { stream: true }),
        _ => None,
    }
}

/// The Gemini method of `{model}:{method}`, if it is one the mock answers.
fn gemini(model_method: &str) -> Option<Route<'static>> {
    match model_method.rsplit_once(':') {
        Some((model, "generateContent")) if !model.is_empty() => {
            Some(Route::Gemini { stream: false })
        }
        Some((model, "streamGenerateContent")) if !model.is_empty() => {
            Some(Route::Gemini { stream: true })
        }
        _ => None,
    }
}

/// Routes a request.
pub fn route<'a>(method: &Method, path: &'a str) -> Route<'a> {
    let (wanted, route) = match path {
        "/v1/chat/completions" => (Method::POST, Route::ChatCompletions),
        "/v1/messages" => (Method::POST, Route::Messages),
        "/v1/responses" => (Method::POST, Route::Responses),
        "/v1/embeddings" => (Method::POST, Route::Embeddings),
        "/v1/completions" => (Method::POST, Route::Completions),
        "/v1/models" => (Method::GET, Route::Models),
        "/health" => (Method::GET, Route::Health),
        "/metrics" => (Method::GET, Route::Metrics),
        "/v1/gatebench/config" => (Method::GET, Route::Config),
        "/v1/gatebench/clock" => (Method::GET, Route::Clock),
        "/v1/gatebench/record" => (Method::GET, Route::Record),
        "/v1/gatebench/control" | "/v1/gatebench/control/reset" => return Route::Control,
        _ => {
            let gemini_method = path.strip_prefix("/v1beta/models/").or_else(|| {
                path.strip_prefix("/v1/models/")
                    .filter(|id| id.contains(':'))
            });
            match (gemini_method, path.strip_prefix("/v1/models/")) {
                (Some(method), _) => match gemini(method) {
                    Some(route) => (Method::POST, route),
                    None => return Route::NotFound,
                },
                (None, Some(id)) if !id.is_empty() && !id.contains('/') => {
                    (Method::GET, Route::Model(id))
                }
                _ => match (azure(path), bedrock(path)) {
                    (Some(api), _) => (Method::POST, Route::Azure(api)),
                    (None, Some(route)) => (Method::POST, route),
                    (None, None) => return Route::NotFound,
                },
            }
        }
    };
    // HEAD is GET without the body, wherever GET is answered (health probes use it).
    if *method == wanted || (*method == Method::HEAD && wanted == Method::GET) {
        route
    } else {
        let allow = if wanted == Method::POST {
            "POST"
        } else {
            "GET"
        };
        Route::MethodNotAllowed { allow }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_method_and_path() {
        assert_eq!(
            route(&Method::POST, "/v1/chat/completions"),
            Route::ChatCompletions
        );
        assert_eq!(
            route(&Method::GET, "/v1/chat/completions"),
            Route::MethodNotAllowed { allow: "POST" }
        );
        assert_eq!(route(&Method::GET, "/v1/models"), Route::Models);
        assert_eq!(route(&Method::HEAD, "/health"), Route::Health);
        assert_eq!(
            route(&Method::HEAD, "/v1/chat/completions"),
            Route::MethodNotAllowed { allow: "POST" }
        );
        assert_eq!(
            route(&Method::GET, "/v1/models/gpt-4o"),
            Route::Model("gpt-4o")
        );
        assert_eq!(
            route(&Method::DELETE, "/v1/models/x"),
            Route::MethodNotAllowed { allow: "GET" }
        );
        assert_eq!(route(&Method::GET, "/v1/models/"), Route::NotFound);
        assert_eq!(route(&Method::GET, "/health"), Route::Health);
        assert_eq!(route(&Method::POST, "/v1/messages"), Route::Messages);
        assert_eq!(route(&Method::POST, "/v1/responses"), Route::Responses);
        assert_eq!(route(&Method::GET, "/v1/gatebench/config"), Route::Config);
        assert_eq!(route(&Method::GET, "/v1/gatebench/clock"), Route::Clock);
        assert_eq!(route(&Method::GET, "/v1/gatebench/record"), Route::Record);
        assert_eq!(
            route(&Method::POST, "/v1/gatebench/control"),
            Route::Control
        );
        assert_eq!(
            route(&Method::POST, "/v1/gatebench/control/reset"),
            Route::Control
        );
        assert_eq!(
            route(&Method::POST, "/v1/chat/completions").api_name(),
            Some("chat")
        );
        assert_eq!(route(&Method::GET, "/health").api_name(), None);
        assert_eq!(route(&Method::POST, "/v1/nothing"), Route::NotFound);
        let azure = |path| route(&Method::POST, path);
        assert_eq!(
            azure("/openai/deployments/gpt-4o/chat/completions"),
            Route::Azure(AzureApi::Chat)
        );
        assert_eq!(
            azure("/openai/deployments/e/embeddings"),
            Route::Azure(AzureApi::Embeddings)
        );
        assert_eq!(
            azure("/openai/deployments/c/completions"),
            Route::Azure(AzureApi::Completions)
        );
        assert_eq!(
            azure("/openai/responses"),
            Route::Azure(AzureApi::Responses)
        );
        assert_eq!(
            azure("/openai/v1/chat/completions"),
            Route::Azure(AzureApi::Chat)
        );
        assert_eq!(azure("/openai/deployments/x/images"), Route::NotFound);
        assert_eq!(
            azure("/v1beta/models/gemini-2.0-flash:generateContent"),
            Route::Gemini { stream: false }
        );
        assert_eq!(
            azure("/v1beta/models/gemini-2.0-flash:streamGenerateContent"),
            Route::Gemini { stream: true }
        );
        assert_eq!(
            azure("/v1/models/g:generateContent"),
            Route::Gemini { stream: false }
        );
        assert_eq!(azure("/v1beta/models/g:countTokens"), Route::NotFound);
        assert_eq!(
            azure("/model/amazon.nova-lite-v1%3A0/converse"),
            Route::Bedrock { stream: false }
        );
        assert_eq!(
            azure("/model/m/converse-stream"),
            Route::Bedrock { stream: true }
        );
        assert_eq!(azure("/model/m/invoke"), Route::NotFound);
        assert_eq!(azure("/v1beta/models/:generateContent"), Route::NotFound);
        assert_eq!(
            route(&Method::GET, "/openai/deployments/x/chat/completions"),
            Route::MethodNotAllowed { allow: "POST" }
        );
    }

    #[test]
    fn the_model_a_path_names() {
        let cases = [
            (
                "/openai/deployments/gpt-4o-prod/chat/completions",
                Some("gpt-4o-prod"),
            ),
            ("/openai/deployments//chat/completions", None),
            (
                "/v1beta/models/gemini-2.0-flash:generateContent",
                Some("gemini-2.0-flash"),
            ),
            ("/v1/models/g:streamGenerateContent", Some("g")),
            ("/v1beta/models/:generateContent", None),
            ("/v1beta/models/g", None),
            (
                "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
                Some("anthropic.claude-3-haiku-20240307-v1%3A0"),
            ),
            ("/model//converse", None),
            ("/v1/chat/completions", None),
        ];
        for (path, model) in cases {
            assert_eq!(model_in_path(path), model, "{path}");
        }
    }
}
