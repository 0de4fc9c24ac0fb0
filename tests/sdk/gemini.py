"""Checks the mock's Gemini API with Google's official google-genai SDK.

Usage: gemini.py BASE_URL   (the mock started with --require-api-key g-key; 16 tokens)
Prints "gemini: ok" on success.
"""

import sys
import urllib.request

from google import genai
from google.genai import errors, types

base = sys.argv[1]
client = genai.Client(api_key="g-key", http_options=types.HttpOptions(base_url=base))
model = "gemini-2.0-flash"


def faults_429():
    """How many 429s the mock has answered on purpose (its /metrics)."""
    text = urllib.request.urlopen(base + "/metrics").read().decode()
    line = next(l for l in text.splitlines() if l.startswith('mock_faults_total{status="429"}'))
    return int(line.split()[-1])

# Whole: text, finish reason, usage and the model from the path.
r = client.models.generate_content(model=model, contents="Say hello.")
assert r.text.startswith("Hello from the gatebench"), r.text
candidate = r.candidates[0]
assert candidate.finish_reason == types.FinishReason.STOP, candidate.finish_reason
assert r.usage_metadata.candidates_token_count == 16, r.usage_metadata
assert r.usage_metadata.total_token_count == r.usage_metadata.prompt_token_count + 16
assert r.model_version == model, r.model_version

# Streamed (`:streamGenerateContent?alt=sse`): one partial response per token, the last with
# the finish reason and usage.
chunks = list(client.models.generate_content_stream(model=model, contents="Say hello."))
assert len(chunks) == 16, len(chunks)
assert "".join(c.text for c in chunks) == r.text
assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
assert chunks[-1].usage_metadata.candidates_token_count == 16
assert chunks[0].candidates[0].finish_reason is None

# maxOutputTokens cuts the answer (MAX_TOKENS); the content filter ends it with SAFETY.
cut = client.models.generate_content(
    model=model,
    contents="Say hello.",
    config=types.GenerateContentConfig(max_output_tokens=3, system_instruction="Be brief."),
)
assert cut.text == "Hello from the", cut.text
assert cut.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
filtered = client.models.generate_content(
    model=model,
    contents="Say hello.",
    config=types.GenerateContentConfig(http_options=types.HttpOptions(headers={"x-mock-fault": "content_filter"})),
)
assert filtered.candidates[0].finish_reason == types.FinishReason.SAFETY

# Errors as the SDK's classes, with Google's status names.
def expect(call, cls, code, status):
    try:
        call()
    except cls as err:
        assert err.code == code and err.status == status, (err.code, err.status)
        return err
    raise AssertionError(f"no {cls.__name__}")


two = types.GenerateContentConfig(candidate_count=2)
err = expect(
    lambda: client.models.generate_content(model=model, contents="x", config=two),
    errors.ClientError,
    400,
    "INVALID_ARGUMENT",
)
assert "candidate_count" in err.message, err.message
forced = lambda status: types.GenerateContentConfig(http_options=types.HttpOptions(headers={"x-mock-status": str(status)}))
expect(
    lambda: client.models.generate_content(model=model, contents="x", config=forced(429)),
    errors.ClientError,
    429,
    "RESOURCE_EXHAUSTED",
)
expect(
    lambda: client.models.generate_content(model=model, contents="x", config=forced(503)),
    errors.ServerError,
    503,
    "UNAVAILABLE",
)
bad = genai.Client(api_key="wrong", http_options=types.HttpOptions(base_url=base))
err = expect(lambda: bad.models.generate_content(model=model, contents="x"), errors.ClientError, 400, "INVALID_ARGUMENT")
assert "API key not valid" in err.message, err.message

# The SDK retries RESOURCE_EXHAUSTED when asked to: three attempts, three 429s at the mock.
before = faults_429()
retrying = types.HttpOptions(
    headers={"x-mock-status": "429"},
    retry_options=types.HttpRetryOptions(attempts=3, initial_delay=0.05, max_delay=0.1),
)
expect(
    lambda: client.models.generate_content(
        model=model, contents="x", config=types.GenerateContentConfig(http_options=retrying)
    ),
    errors.ClientError,
    429,
    "RESOURCE_EXHAUSTED",
)
assert faults_429() - before == 3, faults_429() - before

print("gemini: ok")
