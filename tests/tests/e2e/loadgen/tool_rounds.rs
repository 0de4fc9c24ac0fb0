//! Tool-calling turns that end: with `--tool-calls` on, a request whose last message is a
//! tool's result gets text, in every API that calls tools, whole and streamed.

use gatebench_tests::{start_mock, Client};
use hyper::Method;
use serde_json::{json, Value};

fn always_calls() -> mock_upstream::MockServer {
    let config = mock_upstream::RawSettings {
        tool_calls: Some("100%".into()),
        ..Default::default()
    }
    .validate()
    .unwrap();
    start_mock(config)
}

async fn post(client: &mut Client, path: &str, body: &Value) -> (u16, String) {
    let headers = [
        ("content-type", "application/json"),
        ("anthropic-version", "2023-06-01"),
    ];
    let r = client
        .send(
            Method::POST,
            path,
            &headers,
            &serde_json::to_vec(body).unwrap(),
        )
        .await;
    (r.status.as_u16(), r.text())
}

#[tokio::test]
async fn chat_answers_a_tool_result_with_text_and_a_new_question_with_a_call() {
    let mock = always_calls();
    let mut client = Client::connect(mock.local_addr()).await;
    let tools = json!([{"type": "function", "function": {"name": "get_weather"}}]);
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"}}]});
    let result = json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny"});
    let user = json!({"role": "user", "content": "weather?"});
    for stream in [false, true] {
        let ended = json!({"model": "m", "tools": tools, "stream": stream,
            "messages": [user, call, result]});
        let (status, text) = post(&mut client, "/v1/chat/completions", &ended).await;
        assert_eq!(status, 200);
        assert!(!text.contains("tool_calls"), "{text}");
        assert!(text.contains("Hello"), "{text}");
        // The same request, the same bytes.
        assert_eq!(
            post(&mut client, "/v1/chat/completions", &ended).await.1,
            text
        );
        let again = json!({"model": "m", "tools": tools, "stream": stream,
            "messages": [user, call, result, user]});
        let (_, text) = post(&mut client, "/v1/chat/completions", &again).await;
        assert!(text.contains("tool_calls"), "{text}");
    }
}

#[tokio::test]
async fn responses_answer_a_function_call_output_with_text() {
    let mock = always_calls();
    let mut client = Client::connect(mock.local_addr()).await;
    let tools = json!([{"type": "function", "name": "get_weather"}]);
    for stream in [false, true] {
        let ended = json!({"model": "m", "tools": tools, "stream": stream, "input": [
            {"role": "user", "content": "weather?"},
            {"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "sunny"}]});
        let (status, text) = post(&mut client, "/v1/responses", &ended).await;
        assert_eq!(status, 200);
        assert!(!text.contains("\"function_call\""), "{text}");
        assert!(text.contains("output_text"), "{text}");
        let asked = json!({"model": "m", "tools": tools, "stream": stream, "input": "weather?"});
        let (_, text) = post(&mut client, "/v1/responses", &asked).await;
        assert!(text.contains("\"function_call\""), "{text}");
    }
}

#[tokio::test]
async fn messages_answer_a_tool_result_block_with_text() {
    let mock = always_calls();
    let mut client = Client::connect(mock.local_addr()).await;
    let tools = json!([{"name": "get_weather", "input_schema": {"type": "object"}}]);
    for stream in [false, true] {
        let ended = json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "tools": tools,
            "stream": stream, "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t", "name": "get_weather", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "sunny"}]}]});
        let (status, text) = post(&mut client, "/v1/messages", &ended).await;
        assert_eq!(status, 200, "{text}");
        assert!(!text.contains("\"tool_use\""), "{text}");
        assert!(text.contains("end_turn"), "{text}");
        let asked = json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "tools": tools,
            "stream": stream, "messages": [{"role": "user", "content": "weather?"}]});
        let (_, text) = post(&mut client, "/v1/messages", &asked).await;
        assert!(text.contains("\"tool_use\""), "{text}");
    }
}
