"""Errors from the mock as the official SDKs raise them: each its own exception class with the
right status, for whole answers, before a stream and inside one.

Usage: sdk_errors.py BASE_URL
(the mock started with --require-api-key sk-good --context-window small-gpt=20,small-claude=20)
"""

import sys

import anthropic
import openai


def msg_messages():
    return [{"role": "user", "content": "hi"}]

base = sys.argv[1]
oa = openai.OpenAI(base_url=base + "/v1", api_key="sk-good", max_retries=0)
chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def expect(call, cls, status):
    try:
        call()
    except cls as err:
        got = getattr(err, "status_code", None)
        assert got == status, f"{cls.__name__}: status {got}, expected {status}"
        return err
    raise AssertionError(f"no {cls.__name__}")


def forced(status):
    return {"extra_headers": {"x-mock-status": str(status)}}


for status, cls in [
    (400, openai.BadRequestError),
    (404, openai.NotFoundError),
    (429, openai.RateLimitError),
    (500, openai.InternalServerError),
    (503, openai.InternalServerError),
]:
    err = expect(lambda: oa.chat.completions.create(**chat, **forced(status)), cls, status)
    if status == 429:
        assert err.body["code"] == "rate_limit_exceeded", err.body
    expect(
        lambda: oa.chat.completions.create(**chat, stream=True, **forced(status)), cls, status
    )
    expect(lambda: oa.responses.create(model="gpt-4o-mini", input="hi", **forced(status)), cls, status)

# A wrong key is the SDK's AuthenticationError.
bad = openai.OpenAI(base_url=base + "/v1", api_key="sk-wrong-key-000", max_retries=0)
err = expect(lambda: bad.chat.completions.create(**chat), openai.AuthenticationError, 401)
assert err.body["code"] == "invalid_api_key", err.body

# The in-stream error event ends iteration with the SDK's APIError.
stream = oa.chat.completions.create(**chat, stream=True, extra_headers={"x-mock-fault": "error@2"})
try:
    for _ in stream:
        pass
    raise AssertionError("the in-stream error was not raised")
except openai.APIError as err:
    assert "server had an error" in str(err), err

# Past the model's context size: OpenAI's context_length_exceeded, as gateways map it.
long_chat = {"model": "small-gpt", "messages": [{"role": "user", "content": "word " * 40}]}
err = expect(lambda: oa.chat.completions.create(**long_chat), openai.BadRequestError, 400)
assert err.code == "context_length_exceeded" and err.param == "messages", err.body
assert "maximum context length is 20 tokens" in err.message, err.message
err = expect(
    lambda: oa.chat.completions.create(model="small-gpt", messages=chat["messages"], max_tokens=50),
    openai.BadRequestError,
    400,
)
assert "in the completion" in err.message, err.message
err = expect(lambda: oa.responses.create(model="small-gpt", input="word " * 40), openai.BadRequestError, 400)
assert err.code == "context_length_exceeded" and err.param == "input", err.body

# The content filter (`x-mock-fault: content_filter`): the answer ends as each API ends it.
filtered = {"extra_headers": {"x-mock-fault": "content_filter"}}
r = oa.chat.completions.create(**chat, **filtered)
assert r.choices[0].finish_reason == "content_filter", r.choices[0]
chunks = list(oa.chat.completions.create(**chat, stream=True, **filtered))
assert chunks[-1].choices[0].finish_reason == "content_filter", chunks[-1]
r = oa.responses.create(model="gpt-4o", input="x", **filtered)
assert r.status == "incomplete" and r.incomplete_details.reason == "content_filter", r
r = oa.completions.create(model="gpt-4o", prompt="x", **filtered)
assert r.choices[0].finish_reason == "content_filter", r.choices[0]

an = anthropic.Anthropic(base_url=base, api_key="sk-good", max_retries=0)
m = an.messages.create(model="claude-x", max_tokens=5, messages=msg_messages(), **filtered)
assert m.stop_reason == "refusal", m.stop_reason
with an.messages.stream(model="claude-x", max_tokens=5, messages=msg_messages(), **filtered) as s:
    final = s.get_final_message()
assert final.stop_reason == "refusal", final.stop_reason
err = expect(
    lambda: an.messages.create(model="small-claude", max_tokens=50, messages=msg_messages()),
    anthropic.BadRequestError,
    400,
)
assert "exceed context limit" in err.message, err.message
msg = {"model": "claude-x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
overloaded = getattr(anthropic, "OverloadedError", anthropic.InternalServerError)
for status, cls in [
    (429, anthropic.RateLimitError),
    (500, anthropic.InternalServerError),
    (529, overloaded),
]:
    err = expect(lambda: an.messages.create(**msg, **forced(status)), cls, status)
    assert err.body["type"] == "error", err.body
    expect(lambda: an.messages.create(**msg, stream=True, **forced(status)), cls, status)
bad = anthropic.Anthropic(base_url=base, api_key="sk-wrong", max_retries=0)
expect(lambda: bad.messages.create(**msg), anthropic.AuthenticationError, 401)

# Anthropic's `event: error` inside a stream is raised by the SDK.
try:
    with an.messages.stream(**msg, extra_headers={"x-mock-fault": "error@4"}) as s:
        for _ in s:
            pass
    raise AssertionError("the in-stream error was not raised")
except anthropic.APIError as err:
    assert "Overloaded" in str(err) or "overloaded" in str(err), err
print("sdk errors: ok")
