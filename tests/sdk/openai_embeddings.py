"""Checks the mock's embeddings with the official OpenAI Python SDK.

Usage: python3 openai_embeddings.py BASE_URL   (a mock with the default 1536 dimensions)
Prints "openai embeddings: ok" on success.
"""

import math
import sys

import openai

base_url = sys.argv[1]
client = openai.OpenAI(base_url=base_url, api_key="sk-gatebench", max_retries=0, timeout=30)

# The SDK asks for base64 by default and decodes it.
result = client.embeddings.create(model="text-embedding-3-small", input=["hello", "world"])
assert result.object == "list" and result.model == "text-embedding-3-small", result
assert [d.index for d in result.data] == [0, 1]
first = result.data[0].embedding
assert len(first) == 1536, len(first)
assert abs(math.sqrt(sum(x * x for x in first)) - 1.0) < 1e-3
assert result.usage.prompt_tokens == result.usage.total_tokens > 0

# Floats asked for explicitly give the same vector; the same input always gives the same vector.
floats = client.embeddings.create(model="m", input="hello", encoding_format="float", dimensions=1536)
assert all(abs(a - b) < 1e-6 for a, b in zip(floats.data[0].embedding, first))
again = client.embeddings.create(model="m", input="hello", dimensions=8)
assert len(again.data[0].embedding) == 8
other = client.embeddings.create(model="m", input="hellp", dimensions=8)
assert again.data[0].embedding != other.data[0].embedding

try:
    client.embeddings.create(model="m", input=[])
    raise AssertionError("an empty input was accepted")
except openai.BadRequestError as err:
    assert err.status_code == 400

print("openai embeddings: ok")
