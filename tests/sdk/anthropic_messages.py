"""Checks the mock's Messages API with the official Anthropic Python SDK.

Usage: python3 anthropic_messages.py BASE_URL   (for example http://127.0.0.1:8080)
Exits non-zero with a message on the first mismatch; prints "anthropic sdk: ok" on success.
"""

import sys

import anthropic

base_url = sys.argv[1]
client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-gatebench", max_retries=0, timeout=30)
messages = [{"role": "user", "content": "Say hello."}]

# Non-streaming, capped by max_tokens.
message = client.messages.create(model="claude-3-5-haiku-latest", max_tokens=5, messages=messages)
assert message.type == "message", message
assert message.role == "assistant"
assert message.model == "claude-3-5-haiku-latest", message.model
assert message.stop_reason == "max_tokens", message.stop_reason
assert message.content[0].type == "text"
assert message.content[0].text == "Hello from the gatebench mock", message.content[0].text
assert message.usage.output_tokens == 5, message.usage
assert message.usage.input_tokens > 0, message.usage

# Non-streaming, uncapped, with a system prompt; the raw response exposes the headers.
raw = client.messages.with_raw_response.create(
    model="claude-3-5-sonnet-latest", max_tokens=1024, system="Be brief.", messages=messages
)
assert raw.headers.get("request-id"), raw.headers
assert raw.headers.get("anthropic-ratelimit-requests-limit"), raw.headers
full = raw.parse()
assert full.stop_reason == "end_turn", full.stop_reason
assert full.usage.output_tokens == 16, full.usage
assert full.usage.input_tokens > message.usage.input_tokens, "the system prompt counts"

# Streaming, raw events: every event type in order (the SDK drops `ping`, which the Rust
# tests check on the wire), cumulative usage in message_delta.
events = list(client.messages.create(model="claude-x", max_tokens=1024, messages=messages, stream=True))
kinds = [e.type for e in events]
assert kinds[:2] == ["message_start", "content_block_start"], kinds
assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"], kinds
deltas = [e for e in events if e.type == "content_block_delta"]
assert len(deltas) == 16, len(deltas)
assert all(d.delta.type == "text_delta" and d.index == 0 for d in deltas)
text = "".join(d.delta.text for d in deltas)
assert text == full.content[0].text, text
assert events[0].message.content == [] and events[0].message.stop_reason is None
delta = events[-2]
assert delta.delta.stop_reason == "end_turn" and delta.usage.output_tokens == 16, delta

# The SDK's stream helper accumulates the final message.
with client.messages.stream(model="claude-x", max_tokens=3, messages=messages) as stream:
    streamed = "".join(stream.text_stream)
    final = stream.get_final_message()
assert streamed == "Hello from the", streamed
assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 3, final

# Errors come back as the SDK's own exception classes.
try:
    client.messages.create(model="claude-x", max_tokens=0, messages=messages)
    raise AssertionError("max_tokens 0 was accepted")
except anthropic.BadRequestError as e:
    assert e.status_code == 400
    assert e.body["error"]["type"] == "invalid_request_error", e.body

print("anthropic sdk: ok")
