"""Checks the mock's Responses API with the official OpenAI Python SDK.

Usage: python3 openai_responses.py BASE_URL   (for example http://127.0.0.1:8080/v1)
The mock must answer 32 tokens. Prints "openai responses: ok" on success.
"""

import sys

import openai

base_url = sys.argv[1]
client = openai.OpenAI(base_url=base_url, api_key="sk-gatebench", max_retries=0, timeout=30)

# Non-streaming, whole.
response = client.responses.create(model="gpt-4o-mini", input="Say hello.", instructions="Be brief.")
assert response.object == "response", response
assert response.status == "completed", response.status
assert response.model == "gpt-4o-mini"
text = response.output_text
assert text.startswith("Hello from the gatebench mock"), text
assert response.usage.output_tokens == 32, response.usage
assert response.usage.total_tokens == response.usage.input_tokens + 32

# Non-streaming, cut by max_output_tokens.
cut = client.responses.create(
    model="gpt-4o-mini",
    input=[{"role": "user", "content": [{"type": "input_text", "text": "Say hello."}]}],
    max_output_tokens=16,
)
assert cut.status == "incomplete", cut.status
assert cut.incomplete_details.reason == "max_output_tokens", cut.incomplete_details
assert cut.usage.output_tokens == 16
assert text.startswith(cut.output_text), cut.output_text

# Streaming: every event in order, monotonic sequence numbers, the text rebuilt from deltas.
events = list(client.responses.create(model="gpt-4o", input="Say hello.", stream=True))
kinds = [e.type for e in events]
assert kinds[:4] == [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
], kinds
assert kinds[-4:] == [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
], kinds
assert [e.sequence_number for e in events] == list(range(len(events)))
deltas = [e for e in events if e.type == "response.output_text.delta"]
assert len(deltas) == 32, len(deltas)
assert all(d.output_index == 0 and d.content_index == 0 and d.item_id == deltas[0].item_id for d in deltas)
assert "".join(d.delta for d in deltas) == text
assert events[-1].response.output_text == text
assert events[-1].response.usage.output_tokens == 32

# The SDK's stream helper.
with client.responses.stream(model="gpt-4o", input="Say hello.") as stream:
    final = stream.get_final_response()
assert final.status == "completed", final.status
assert final.output_text == text

# A stream cut by max_output_tokens ends in response.incomplete, as the API's does (the SDK's
# helper above accepts only response.completed, so the raw events are read).
events = list(client.responses.create(model="gpt-4o", input="Say hello.", max_output_tokens=16, stream=True))
assert events[-1].type == "response.incomplete", events[-1].type
assert events[-1].response.status == "incomplete"
assert events[-1].response.incomplete_details.reason == "max_output_tokens"
assert events[-1].response.output_text == cut.output_text

# Errors as the SDK's exception classes.
try:
    client.responses.create(model="gpt-4o", input="x", max_output_tokens=3)
    raise AssertionError("max_output_tokens 3 was accepted")
except openai.BadRequestError as err:
    assert err.status_code == 400
    assert err.body["code"] == "integer_below_min_value", err.body

print("openai responses: ok")
