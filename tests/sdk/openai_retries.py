"""The official OpenAI SDK's retries against the mock's faults: a 429 with `retry-after-ms` and
`x-should-retry` is retried after the advertised wait, and ends as the SDK's RateLimitError; a
400 with `x-should-retry: false` is not retried.

Usage: python3 openai_retries.py BASE_URL   (a mock run with --fault 429:100%)
Prints "openai retries: ok" on success.
"""

import sys
import time
import urllib.request

import openai

base_url = sys.argv[1]
client = openai.OpenAI(base_url=base_url, api_key="sk-gatebench", max_retries=2, timeout=30)
messages = [{"role": "user", "content": "Say hello."}]

started = time.monotonic()
try:
    client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    raise AssertionError("a 429 was not raised")
except openai.RateLimitError as err:
    assert err.status_code == 429
    assert err.body["code"] == "rate_limit_exceeded", err.body
elapsed = time.monotonic() - started
# Two retries, each after the advertised retry-after-ms of 1000 ms.
assert elapsed >= 1.9, elapsed

# A 400 says x-should-retry: false, and the SDK does not retry it.
try:
    client.chat.completions.create(
        model="gpt-4o-mini", messages=messages, extra_headers={"x-mock-status": "400"}
    )
    raise AssertionError("a 400 was not raised")
except openai.BadRequestError as err:
    assert err.response.headers["x-should-retry"] == "false"

metrics = urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics").read().decode()
assert 'mock_faults_total{status="429"} 3' in metrics, metrics
assert 'mock_faults_total{status="400"} 1' in metrics, metrics
print("openai retries: ok")
