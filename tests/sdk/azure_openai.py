"""Checks the mock's Azure OpenAI endpoints with the official SDK's AzureOpenAI client.

Usage: azure_openai.py BASE_URL   (the mock started with --require-api-key az-key; 16 tokens)
Prints "azure openai: ok" on success.
"""

import json
import sys
import urllib.error
import urllib.request

import openai

base = sys.argv[1]
client = openai.AzureOpenAI(
    azure_endpoint=base, api_key="az-key", api_version="2024-10-21", max_retries=0, timeout=30
)
messages = [{"role": "user", "content": "Say hello."}]


def faults_429():
    """How many 429s the mock has answered on purpose (its /metrics)."""
    text = urllib.request.urlopen(base + "/metrics").read().decode()
    line = next(l for l in text.splitlines() if l.startswith('mock_faults_total{status="429"}'))
    return int(line.split()[-1])

# Chat, whole: the deployment is the model, and Azure's content filter verdicts are there.
r = client.chat.completions.create(model="gpt-4o-prod", messages=messages)
assert r.model == "gpt-4o-prod", r.model
assert r.choices[0].message.content.startswith("Hello from the gatebench"), r.choices[0]
assert r.choices[0].finish_reason == "stop"
extra = r.model_extra or {}
assert extra["prompt_filter_results"][0]["content_filter_results"]["hate"]["filtered"] is False, extra
choice_extra = r.choices[0].model_extra or {}
assert choice_extra["content_filter_results"]["violence"]["severity"] == "safe", choice_extra
assert r.usage.completion_tokens == 16

# Chat, streamed: Azure's first chunk has no choices, only the prompt's verdict.
chunks = list(client.chat.completions.create(model="gpt-4o-prod", messages=messages, stream=True))
assert chunks[0].choices == [] and chunks[0].model_extra["prompt_filter_results"], chunks[0]
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
assert text == r.choices[0].message.content, text
assert chunks[-1].choices[0].finish_reason == "stop"
with client.chat.completions.stream(model="gpt-4o-prod", messages=messages) as stream:
    final = stream.get_final_completion()
assert final.choices[0].message.content == text

# The content filter ends an answer with Azure's verdict.
filtered = client.chat.completions.create(
    model="gpt-4o-prod", messages=messages, extra_headers={"x-mock-fault": "content_filter"}
)
assert filtered.choices[0].finish_reason == "content_filter"
assert filtered.choices[0].model_extra["content_filter_results"]["violence"]["filtered"] is True

# Embeddings, legacy completions and the Responses API on their Azure paths.
e = client.embeddings.create(model="embed-prod", input=["a", "b"])
assert len(e.data) == 2 and len(e.data[0].embedding) == 1536
c = client.completions.create(model="instruct-prod", prompt="Say hello.")
assert c.choices[0].text.startswith("Hello"), c.choices[0]
resp = client.responses.create(model="gpt-4o-prod", input="Say hello.")
assert resp.status == "completed" and resp.output_text == text, resp

# Errors: Azure's own shape for what its gateway refuses; the SDK's classes by status.
bad = openai.AzureOpenAI(azure_endpoint=base, api_key="wrong", api_version="2024-10-21", max_retries=0)
try:
    bad.chat.completions.create(model="gpt-4o-prod", messages=messages)
    raise AssertionError("a wrong api-key was accepted")
except openai.AuthenticationError as err:
    assert err.status_code == 401 and err.body["code"] == "401", err.body
try:
    client.chat.completions.create(
        model="gpt-4o-prod", messages=messages, extra_headers={"x-mock-status": "429"}
    )
    raise AssertionError("no 429")
except openai.RateLimitError as err:
    assert err.body["code"] == "429" and "retry after" in err.body["message"], err.body
    assert err.response.headers["retry-after"] == "1"
try:
    client.chat.completions.create(model="gpt-4o-prod", messages=[])
    raise AssertionError("empty messages were accepted")
except openai.BadRequestError as err:
    assert err.body["code"] == "empty_array", err.body

# The SDK retries Azure's 429 (after its retry-after-ms): three tries, three 429s at the mock.
before = faults_429()
retrying = openai.AzureOpenAI(azure_endpoint=base, api_key="az-key", api_version="2024-10-21", max_retries=2)
try:
    retrying.chat.completions.create(model="gpt-4o-prod", messages=messages, extra_headers={"x-mock-status": "429"})
    raise AssertionError("no 429")
except openai.RateLimitError:
    pass
assert faults_429() - before == 3, faults_429() - before

# Without api-version, Azure answers 404.
request = urllib.request.Request(
    base + "/openai/deployments/gpt-4o-prod/chat/completions",
    data=json.dumps({"messages": messages}).encode(),
    headers={"api-key": "az-key", "content-type": "application/json"},
)
try:
    urllib.request.urlopen(request)
    raise AssertionError("a request without api-version was answered")
except urllib.error.HTTPError as err:
    assert err.code == 404, err.code
    assert json.loads(err.read())["error"]["code"] == "404"

print("azure openai: ok")
