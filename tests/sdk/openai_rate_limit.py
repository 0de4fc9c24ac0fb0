"""The official OpenAI SDK against the mock's token bucket: once a key's requests per minute are
spent, the next request gets a 429 whose retry-after-ms is the real wait until the bucket has a
request again; the SDK waits that long and its retry succeeds.

Usage: python3 openai_rate_limit.py BASE_URL   (a mock run with --rate-limit rpm=N, N small)
Prints "openai rate limit: ok" on success.

The limit is read from the first answer. It must be low enough that one request's refill (60 s /
N) is seconds, far longer than N calls take on any host: every bound below is derived from the
refill and from this script's own clock, never from how fast the calls run.
"""

import sys
import time
import urllib.request

import openai

base_url = sys.argv[1]
messages = [{"role": "user", "content": "Say hello."}]
quick = openai.OpenAI(base_url=base_url, api_key="sk-one", max_retries=0)

# The key's bucket fills at its first request, which comes after this instant.
first = time.monotonic()
raw = quick.chat.completions.with_raw_response.create(
    model="gpt-4o-mini", messages=messages, max_tokens=1
)
limit = int(raw.headers["x-ratelimit-limit-requests"])
refill_ms = 60_000 / limit
assert refill_ms >= 5_000, f"rpm={limit}: a refill of {refill_ms} ms is too short to rely on"
for _ in range(limit - 1):
    quick.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)

# One more without retries: a 429 with the wait until one request has refilled, which is a whole
# refill less the time since the bucket filled (the mock writes it in whole ms, rounded down).
try:
    quick.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)
    raise AssertionError(f"request {limit + 1} was not limited")
except openai.RateLimitError as err:
    since_first_ms = (time.monotonic() - first) * 1_000
    wait_ms = int(err.response.headers["retry-after-ms"])
    assert refill_ms - since_first_ms - 2 <= wait_ms <= refill_ms, (wait_ms, since_first_ms)
    assert err.response.headers["x-ratelimit-remaining-requests"] == "0"

# With retries, the SDK sleeps the advertised wait and then gets through: never before one
# request has refilled since the bucket filled, and within seconds of it.
patient = openai.OpenAI(base_url=base_url, api_key="sk-one", max_retries=3, timeout=30)
r = patient.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)
through_ms = (time.monotonic() - first) * 1_000
assert r.choices[0].message.content == "Hello", r
assert refill_ms - 10 <= through_ms <= refill_ms + 10_000, through_ms

# Another key (rotation) is not limited.
other = openai.OpenAI(base_url=base_url, api_key="sk-two", max_retries=0)
other.chat.completions.create(model="gpt-4o-mini", messages=messages, max_tokens=1)

# The 429 above, and the patient request's first attempt. The wait it was told is rounded down
# to the ms, so a retry that comes back within that ms is told to wait one more: a third.
metrics = urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics").read().decode()
refused = [l for l in metrics.splitlines() if l.startswith('mock_faults_total{status="429"} ')]
assert refused and int(refused[0].split()[-1]) in (2, 3), metrics
print("openai rate limit: ok")
