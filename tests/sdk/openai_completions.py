"""Checks the mock's legacy completions with the official OpenAI Python SDK.

Usage: python3 openai_completions.py BASE_URL
Prints "openai completions: ok" on success.
"""

import sys

import openai

base_url = sys.argv[1]
client = openai.OpenAI(base_url=base_url, api_key="sk-gatebench", max_retries=0, timeout=30)

cut = client.completions.create(model="gpt-3.5-turbo-instruct", prompt="Say hello.", max_tokens=5)
assert cut.object == "text_completion", cut
assert cut.choices[0].text == "Hello from the gatebench mock", cut.choices[0].text
assert cut.choices[0].finish_reason == "length"
assert cut.usage.completion_tokens == 5

whole = client.completions.create(model="gpt-3.5-turbo-instruct", prompt=["Say", "hello"], max_tokens=100)
assert whole.choices[0].finish_reason == "stop" and whole.usage.completion_tokens == 16

chunks = list(
    client.completions.create(
        model="gpt-3.5-turbo-instruct",
        prompt="Say hello.",
        max_tokens=100,
        stream=True,
        stream_options={"include_usage": True},
    )
)
text = "".join(c.choices[0].text for c in chunks if c.choices)
assert text == whole.choices[0].text, text
assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 16

print("openai completions: ok")
