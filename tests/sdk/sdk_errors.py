"""Errors from the mock as the official SDKs raise them: each its own exception class with the
right status, for whole answers, before a stream and inside one.

Usage: sdk_errors.py BASE_URL   (the mock started with --require-api-key sk-good)
"""

import sys

import anthropic
import openai

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

an = anthropic.Anthropic(base_url=base, api_key="sk-good", max_retries=0)
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
