"""Tool calls from the mock, as the official OpenAI and Anthropic SDKs parse them.

Usage: tool_calls.py BASE_URL   (the mock started with --tool-calls 100%)
"""

import json
import sys

import anthropic
import openai

base = sys.argv[1]
tools = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}}},
    },
}]
oa = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)

# Non-streaming: one call of the first tool, with JSON arguments.
r = oa.chat.completions.create(
    model="gpt-4o-mini", messages=[{"role": "user", "content": "weather?"}], tools=tools,
    max_tokens=4,
)
choice = r.choices[0]
assert choice.finish_reason == "tool_calls", choice
call = choice.message.tool_calls[0]
assert call.type == "function" and call.function.name == "get_weather", call
assert json.loads(call.function.arguments) == {"input": "Hello from the gatebench"}, call
assert r.usage.completion_tokens == 4, r.usage

# Streaming: the SDK's own accumulator joins the argument deltas by index.
with oa.chat.completions.stream(
    model="gpt-4o-mini", messages=[{"role": "user", "content": "weather?"}], tools=tools,
    max_tokens=4,
) as stream:
    for _ in stream:
        pass
    final = stream.get_final_completion()
call = final.choices[0].message.tool_calls[0]
assert final.choices[0].finish_reason == "tool_calls", final
assert call.function.name == "get_weather", call
assert json.loads(call.function.arguments) == {"input": "Hello from the gatebench"}, call

# tool_choice "none" gets text.
r = oa.chat.completions.create(
    model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], tools=tools,
    tool_choice="none", max_tokens=2,
)
assert r.choices[0].message.tool_calls is None and r.choices[0].message.content == "Hello from"

# The Responses API: a function_call output item, whole and streamed (the SDK's stream helper
# joins the response.function_call_arguments deltas).
r_tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
r = oa.responses.create(model="gpt-4o-mini", input="weather?", tools=r_tools)
call = r.output[0]
assert call.type == "function_call" and call.name == "get_weather", r.output
assert call.call_id and call.status == "completed", call
assert json.loads(call.arguments)["input"].startswith("Hello from the gatebench"), call
assert r.output_text == "" and r.status == "completed", r
assert r.tools[0].name == "get_weather", r.tools
with oa.responses.stream(model="gpt-4o-mini", input="weather?", tools=r_tools) as stream:
    kinds = [event.type for event in stream]
    final = stream.get_final_response()
assert final.output[0].type == "function_call", final.output
assert final.output[0].arguments == call.arguments, final.output
assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"], kinds
assert kinds[-3:] == [
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.completed",
], kinds
assert "response.function_call_arguments.delta" in kinds, kinds
r = oa.responses.create(model="gpt-4o-mini", input="hi", tools=r_tools, tool_choice="none")
assert r.output[0].type == "message" and r.output_text.startswith("Hello from"), r.output

an = anthropic.Anthropic(base_url=base, api_key="sk-test", max_retries=0)
a_tools = [{"name": "lookup", "input_schema": {"type": "object"}}]
m = an.messages.create(
    model="claude-x", max_tokens=3, messages=[{"role": "user", "content": "hi"}], tools=a_tools,
)
assert m.stop_reason == "tool_use", m
block = m.content[0]
assert block.type == "tool_use" and block.name == "lookup", block
assert block.input == {"input": "Hello from the"}, block

# Streaming: the SDK parses the input_json_delta fragments into the block's input.
with an.messages.stream(
    model="claude-x", max_tokens=3, messages=[{"role": "user", "content": "hi"}], tools=a_tools,
) as stream:
    kinds = [event.type for event in stream]
    final = stream.get_final_message()
assert final.stop_reason == "tool_use", final
assert final.content[0].input == {"input": "Hello from the"}, final.content
assert "input_json" in kinds, kinds
print("tool calls: ok")
