"""Checks the mock's Bedrock Converse API with boto3's bedrock-runtime client.

Usage: bedrock.py BASE_URL   (the mock started with --require-api-key AKIDGATEBENCH; 16 tokens)
Prints "bedrock: ok" on success.
"""

import sys
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

base = sys.argv[1]


def client(key="AKIDGATEBENCH", attempts=1):
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=base,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key="not-checked",
        config=Config(retries={"total_max_attempts": attempts, "mode": "standard"}),
    )


br = client()
model = "anthropic.claude-3-haiku-20240307-v1:0"
messages = [{"role": "user", "content": [{"text": "Say hello."}]}]


def faults_429():
    """How many 429s the mock has answered on purpose (its /metrics)."""
    text = urllib.request.urlopen(base + "/metrics").read().decode()
    line = next(l for l in text.splitlines() if l.startswith('mock_faults_total{status="429"}'))
    return int(line.split()[-1])


def forced(header, value, attempts=1):
    """A client whose requests carry one x-mock-* header."""
    c = client(attempts=attempts)

    def add(request, **_):
        request.headers[header] = value

    c.meta.events.register("before-sign.bedrock-runtime.*", add)
    return c


# Whole: the text, the stop reason and the usage.
r = br.converse(modelId=model, messages=messages, system=[{"text": "Be brief."}])
text = r["output"]["message"]["content"][0]["text"]
assert text.startswith("Hello from the gatebench"), text
assert r["stopReason"] == "end_turn", r["stopReason"]
assert r["usage"]["outputTokens"] == 16, r["usage"]
assert r["usage"]["totalTokens"] == r["usage"]["inputTokens"] + 16
assert r["ResponseMetadata"]["HTTPStatusCode"] == 200

# Streamed: boto3 checks every message's checksums and decodes the events.
events = list(br.converse_stream(modelId=model, messages=messages)["stream"])
kinds = [next(iter(e)) for e in events]
assert kinds[0] == "messageStart" and kinds[-3:] == ["contentBlockStop", "messageStop", "metadata"], kinds
deltas = [e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e]
assert len(deltas) == 16 and "".join(deltas) == text, deltas
assert events[-2]["messageStop"]["stopReason"] == "end_turn"
assert events[-1]["metadata"]["usage"]["outputTokens"] == 16

# maxTokens cuts the answer; the content filter ends it.
cut = br.converse(modelId=model, messages=messages, inferenceConfig={"maxTokens": 3})
assert cut["stopReason"] == "max_tokens" and cut["usage"]["outputTokens"] == 3, cut
filtered = forced("x-mock-fault", "content_filter").converse(modelId=model, messages=messages)
assert filtered["stopReason"] == "content_filtered", filtered["stopReason"]

# Errors: the SDK reads their type from x-amzn-ErrorType.
def error_code(call):
    try:
        call()
    except ClientError as err:
        return err.response["Error"]["Code"], err.response["ResponseMetadata"]["HTTPStatusCode"]
    raise AssertionError("no error")


assert error_code(lambda: br.converse(modelId=model, messages=[])) == ("ValidationException", 400)
assert error_code(lambda: forced("x-mock-status", "429").converse(modelId=model, messages=messages)) == (
    "ThrottlingException",
    429,
)
assert error_code(lambda: forced("x-mock-status", "503").converse(modelId=model, messages=messages)) == (
    "ServiceUnavailableException",
    503,
)
assert error_code(lambda: client("AKIDWRONG").converse(modelId=model, messages=messages)) == (
    "AccessDeniedException",
    403,
)

# boto3's standard retry mode retries ThrottlingException: three attempts, three 429s.
before = faults_429()
throttled = forced("x-mock-status", "429", attempts=3)
assert error_code(lambda: throttled.converse(modelId=model, messages=messages))[0] == "ThrottlingException"
assert faults_429() - before == 3, faults_429() - before

# An error mid-stream is an exception message, which boto3 raises.
stream = forced("x-mock-fault", "error@5").converse_stream(modelId=model, messages=messages)["stream"]
try:
    for _ in stream:
        pass
    raise AssertionError("the in-stream error was not raised")
except EventStreamError as err:
    assert err.response["Error"]["Code"] == "modelStreamErrorException", err.response

print("bedrock: ok")
