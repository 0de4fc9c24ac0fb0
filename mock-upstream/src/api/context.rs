//! A request past its model's context size (`--context-window`), refused as each provider
//! refuses it: the errors gateways map to their own "context window exceeded".

use crate::admission::rejection::Rejection;
use crate::config::Api;

/// The provider's 400 when `prompt` tokens, with the request's output cap `cap` where the API
/// counts it, do not fit `window`; `None` when they do.
pub fn exceeded(api: Api, window: u64, prompt: u64, cap: Option<u64>) -> Option<Rejection> {
    // The Responses API, embeddings, Gemini and Bedrock refuse on the input alone; the others
    // count the cap.
    let output = match api {
        Api::Responses | Api::Embeddings | Api::Gemini | Api::Bedrock => 0,
        Api::Chat | Api::Completions | Api::Messages => cap.unwrap_or(0),
    };
    if prompt + output <= window {
        return None;
    }
    Some(refusal(api, window, prompt, cap.filter(|_| output > 0)))
}

#[cold]
#[inline(never)]
fn refusal(api: Api, window: u64, prompt: u64, cap: Option<u64>) -> Rejection {
    let code = Some("context_length_exceeded");
    match (api, cap) {
        (Api::Chat, cap) => chat_refusal(window, prompt, cap),
        (Api::Completions | Api::Embeddings, cap) => {
            let cap = cap.unwrap_or(0);
            Rejection::bad_request(
                format!(
                    "This model's maximum context length is {window} tokens, however you \
                     requested {} tokens ({prompt} in your prompt; {cap} for the completion). \
                     Please reduce your prompt; or completion length.",
                    prompt + cap
                ),
                None,
                code,
            )
        }
        (Api::Responses, _) => Rejection::bad_request(
            "Your input exceeds the context window of this model. Please adjust your input and \
             try again.",
            Some("input"),
            code,
        ),
        (Api::Gemini, _) => Rejection::bad_request(
            format!(
                "The input token count ({prompt}) exceeds the maximum number of tokens allowed                  ({window})."
            ),
            None,
            None,
        ),
        (Api::Bedrock, _) => Rejection::bad_request(
            "Input is too long for requested model.",
            None,
            None,
        ),
        // Anthropic's words (its errors carry no code; `refused` gives them its shape).
        (Api::Messages, cap) => messages_refusal(window, prompt, cap),
    }
}

/// OpenAI's Chat Completions words for a prompt over the `window` (with the output `cap`).
fn chat_refusal(window: u64, prompt: u64, cap: Option<u64>) -> Rejection {
    let code = Some("context_length_exceeded");
    match cap {
        None => Rejection::bad_request(
            format!(
                "This model's maximum context length is {window} tokens. However, your \
                 messages resulted in {prompt} tokens. Please reduce the length of the messages."
            ),
            Some("messages"),
            code,
        ),
        Some(cap) => Rejection::bad_request(
            format!(
                "This model's maximum context length is {window} tokens. However, you \
                 requested {} tokens ({prompt} in the messages, {cap} in the completion). \
                 Please reduce the length of the messages or completion.",
                prompt + cap
            ),
            Some("messages"),
            code,
        ),
    }
}

/// Anthropic's words (its errors carry no code): over the window with the prompt alone, or
/// only with `max_tokens` added.
fn messages_refusal(window: u64, prompt: u64, cap: Option<u64>) -> Rejection {
    match cap {
        Some(cap) if prompt <= window => Rejection::bad_request(
            format!(
                "input length and `max_tokens` exceed context limit: {prompt} + {cap} > \
                 {window}, decrease input length or `max_tokens` and try again"
            ),
            None,
            None,
        ),
        _ => Rejection::bad_request(
            format!("prompt is too long: {prompt} tokens > {window} maximum"),
            None,
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_counts_what_its_provider_counts() {
        assert!(exceeded(Api::Chat, 100, 60, Some(40)).is_none());
        let r = exceeded(Api::Chat, 100, 60, Some(41)).unwrap();
        assert_eq!(r.code, Some("context_length_exceeded"));
        assert_eq!(r.param.as_deref(), Some("messages"));
        assert!(
            r.message
                .contains("you requested 101 tokens (60 in the messages, 41 in the completion)"),
            "{}",
            r.message
        );
        let r = exceeded(Api::Chat, 100, 101, None).unwrap();
        assert!(
            r.message.contains("your messages resulted in 101 tokens"),
            "{}",
            r.message
        );
        // The Responses API and embeddings look at the input alone.
        assert!(exceeded(Api::Responses, 100, 60, Some(1000)).is_none());
        assert_eq!(
            exceeded(Api::Responses, 100, 101, None)
                .unwrap()
                .param
                .as_deref(),
            Some("input")
        );
        assert!(exceeded(Api::Embeddings, 100, 100, None).is_none());
        let r = exceeded(Api::Messages, 100, 90, Some(20)).unwrap();
        assert!(r.message.contains("90 + 20 > 100"), "{}", r.message);
        let r = exceeded(Api::Messages, 100, 120, Some(20)).unwrap();
        assert_eq!(r.message, "prompt is too long: 120 tokens > 100 maximum");
        assert_eq!(r.code, None);
    }
}
