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
# Validated, not just constructed: the SDK's types require every usage detail.
strict = openai.types.responses.Response.model_validate(
    client.responses.with_raw_response.create(model="gpt-4o-mini", input="Say hello.").http_response.json()
)
assert strict.usage.input_tokens_details.cached_tokens == 0, strict.usage
assert strict.usage.input_tokens_details.cache_write_tokens == 0, strict.usage

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
completed = openai.types.responses.Response.model_validate(events[-1].response.model_dump(exclude_unset=True))
assert completed.usage.input_tokens_details.cache_write_tokens == 0, completed.usage

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

# The request's parameters come back in the response object, whole and streamed, and the
# API's defaults where the request set none.
tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
echoed = client.responses.create(
    model="gpt-4o-mini",
    input="Say hello.",
    instructions="Be brief.",
    temperature=0.25,
    top_p=0.5,
    max_output_tokens=200,
    tools=tools,
    tool_choice="auto",
    parallel_tool_calls=False,
    metadata={"run": "42"},
    user="user-7",
    text={"format": {"type": "json_object"}},
)
assert echoed.instructions == "Be brief.", echoed.instructions
assert echoed.temperature == 0.25 and echoed.top_p == 0.5, echoed
assert echoed.max_output_tokens == 200, echoed.max_output_tokens
assert echoed.tools[0].name == "get_weather", echoed.tools
assert echoed.parallel_tool_calls is False
assert echoed.metadata == {"run": "42"}, echoed.metadata
assert echoed.user == "user-7"
assert echoed.text.format.type == "json_object", echoed.text
assert response.instructions == "Be brief." and response.temperature == 1.0 and response.tools == []
events = list(client.responses.create(model="gpt-4o", input="x", temperature=0.5, instructions="Hi.", stream=True))
for e in (events[0], events[1], events[-1]):
    assert e.response.temperature == 0.5 and e.response.instructions == "Hi.", e

# An error mid-stream (`x-mock-fault: error@K`) is the API's response.failed event: the response
# whole, with its id, model, error and the sequence number the stream had reached.
events = list(
    client.responses.create(
        model="gpt-4o", input="x", stream=True, extra_headers={"x-mock-fault": "error@6"}
    )
)
failed = events[-1]
assert failed.type == "response.failed", failed.type
assert failed.sequence_number == 6, failed.sequence_number
assert [e.sequence_number for e in events] == list(range(7))
assert failed.response.status == "failed"
assert failed.response.id == events[0].response.id and failed.response.model == "gpt-4o"
assert failed.response.error.code == "server_error", failed.response.error
assert failed.response.output == []

# Errors as the SDK's exception classes.
try:
    client.responses.create(model="gpt-4o", input="x", max_output_tokens=3)
    raise AssertionError("max_output_tokens 3 was accepted")
except openai.BadRequestError as err:
    assert err.status_code == 400
    assert err.body["code"] == "integer_below_min_value", err.body

print("openai responses: ok")
