"""The official OpenAI SDK against the mock's token bucket: once a key's requests per minute are
spent, the next request gets a 429 whose retry-after-ms is the real wait until the bucket has a
request again; the SDK waits that long and its retry succeeds.

Usage: python3 openai_rate_limit.py BASE_URL   (a mock run with --rate-limit rpm=30)
Prints "openai rate limit: ok" on success.
"""

import sys
import time
import urllib.request

import openai

base_url = sys.argv[1]
messages = [{"role": "user", "content": "Say hello."}]
quick = openai.OpenAI(base_url=base_url, api_key="sk-one", max_retries=0)
for _ in range(30):
    quick.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)

# The 31st without retries: a 429 with the wait until one request has refilled (2 s at 30/min).
try:
    quick.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)
    raise AssertionError("the 31st request was not limited")
except openai.RateLimitError as err:
    wait_ms = int(err.response.headers["retry-after-ms"])
    assert 1_000 <= wait_ms <= 2_000, wait_ms
    assert err.response.headers["x-ratelimit-remaining-requests"] == "0"

# With retries, the SDK sleeps the advertised wait and then gets through.
patient = openai.OpenAI(base_url=base_url, api_key="sk-one", max_retries=3, timeout=30)
started = time.monotonic()
r = patient.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)
elapsed = time.monotonic() - started
assert r.choices[0].message.content == "Hello", r
assert 0.5 <= elapsed <= 6.0, elapsed

# Another key (rotation) is not limited.
other = openai.OpenAI(base_url=base_url, api_key="sk-two", max_retries=0)
other.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)

metrics = urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics").read().decode()
assert 'mock_faults_total{status="429"} 2' in metrics, metrics
print("openai rate limit: ok")
