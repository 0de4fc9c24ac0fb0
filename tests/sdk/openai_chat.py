"""Checks the mock's chat completions with the official OpenAI Python SDK.

Usage: python3 openai_chat.py BASE_URL   (for example http://127.0.0.1:8080/v1)
Exits non-zero with a message on the first mismatch; prints "openai sdk: ok" on success.
"""

import sys

import openai

base_url = sys.argv[1]
client = openai.OpenAI(base_url=base_url, api_key="sk-gatebench", max_retries=0, timeout=30)
messages = [{"role": "user", "content": "Say hello."}]

# Non-streaming, capped by max_tokens.
completion = client.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=5)
assert completion.object == "chat.completion", completion
assert completion.model == "gpt-4o-mini", completion.model
choice = completion.choices[0]
assert choice.finish_reason == "length", choice.finish_reason
assert choice.message.role == "assistant"
assert choice.message.content == "Hello from the gatebench mock", choice.message.content
assert completion.usage.completion_tokens == 5, completion.usage
assert completion.usage.total_tokens == completion.usage.prompt_tokens + 5

# Non-streaming, uncapped; the raw response exposes the headers.
raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=messages)
assert raw.headers.get("x-request-id"), raw.headers
full = raw.parse()
assert full.choices[0].finish_reason == "stop"
assert full.usage.completion_tokens == 16

# Streaming with include_usage.
stream = client.chat.completions.create(
    model="gpt-4o-mini",
    messages=messages,
    stream=True,
    stream_options={"include_usage": True},
)
chunks = list(stream)
assert chunks[0].choices[0].delta.role == "assistant"
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
assert text == full.choices[0].message.content, text
finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
assert finishes == ["stop"], finishes
assert chunks[-1].choices == [], chunks[-1]
assert chunks[-1].usage.completion_tokens == 16, chunks[-1].usage
assert all(c.usage is None for c in chunks[:-1])

# Streaming without usage.
stream = client.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True)
chunks = list(stream)
assert all(c.usage is None for c in chunks)
assert chunks[-1].choices[0].finish_reason == "stop"

# Errors surface as the SDK's own exception types.
try:
    client.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=0)
except openai.BadRequestError as err:
    assert err.status_code == 400
    assert err.body["code"] == "integer_below_min_value", err.body
else:
    raise AssertionError("max_tokens=0 was accepted")

try:
    client.with_options(base_url=base_url + "/nowhere").models.list()
except openai.NotFoundError as err:
    assert err.status_code == 404
else:
    raise AssertionError("unknown path was accepted")

models = [m.id for m in client.models.list()]
assert models == ["gpt-4o-mini", "gpt-4o"], models

print("openai sdk: ok")
