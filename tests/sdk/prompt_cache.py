"""Checks every prompt cache field of the mock with the official SDKs, whole and streamed:
openai (chat and Responses), anthropic, google-genai and boto3.

Usage: prompt_cache.py BASE_URL   (the mock started with --prompt-cache on)
Prints "prompt cache sdks: ok" on success.
"""

import sys

import anthropic
import boto3
import openai
from botocore.config import Config
from google import genai
from google.genai import types

base = sys.argv[1]
# About 1,800 tokens by the mock's estimate: past every minimum but Pro's and Opus 4.5's.
system = "You are a careful assistant who answers briefly. " * 150


def check_openai():
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-cache", max_retries=0)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "one?"}]
    first = client.chat.completions.create(model="gpt-4o", messages=messages)
    details = first.usage.prompt_tokens_details
    assert details.cached_tokens == 0, details
    assert details.cache_write_tokens >= 1024 and (details.cache_write_tokens - 1024) % 128 == 0, details
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o", messages=messages, stream=True, stream_options={"include_usage": True}
        )
    )
    usage = chunks[-1].usage
    assert usage.prompt_tokens_details.cached_tokens == details.cache_write_tokens, usage
    assert usage.prompt_tokens_details.cached_tokens < usage.prompt_tokens, usage

    r = client.responses.create(model="gpt-4o", instructions=system, input="one?")
    strict = openai.types.responses.Response.model_validate(r.model_dump())
    written = strict.usage.input_tokens_details.cache_write_tokens
    assert strict.usage.input_tokens_details.cached_tokens == 0 and written >= 1024, strict.usage
    events = list(client.responses.create(model="gpt-4o", instructions=system, input="one?", stream=True))
    done = events[-1]
    assert done.type == "response.completed", done.type
    details = openai.types.responses.Response.model_validate(done.response.model_dump()).usage.input_tokens_details
    assert details.cached_tokens == written and details.cache_write_tokens == 0, details


def check_anthropic():
    client = anthropic.Anthropic(base_url=base, api_key="sk-ant-cache", max_retries=0)
    kwargs = dict(
        model="claude-sonnet-4-5",
        max_tokens=16,
        system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        messages=[{"role": "user", "content": "one?"}],
    )
    first = client.messages.create(**kwargs)
    u = first.usage
    assert u.cache_read_input_tokens == 0 and u.cache_creation_input_tokens >= 1024, u
    assert u.cache_creation.ephemeral_1h_input_tokens == u.cache_creation_input_tokens, u
    assert u.cache_creation.ephemeral_5m_input_tokens == 0, u
    assert 0 < u.input_tokens < 50, u
    with client.messages.stream(**kwargs) as stream:
        events = list(stream)
        final = stream.get_final_message()
    start = next(e for e in events if e.type == "message_start").message.usage
    assert start.cache_read_input_tokens == u.cache_creation_input_tokens, start
    assert start.cache_creation_input_tokens == 0 and start.input_tokens == u.input_tokens, start
    delta = next(e for e in events if e.type == "message_delta").usage
    assert delta.cache_read_input_tokens == u.cache_creation_input_tokens, delta
    assert final.usage.cache_read_input_tokens == u.cache_creation_input_tokens, final.usage


def check_gemini():
    client = genai.Client(api_key="g-cache", http_options=types.HttpOptions(base_url=base))
    config = types.GenerateContentConfig(system_instruction=system)
    first = client.models.generate_content(model="gemini-2.5-flash", contents="one?", config=config)
    assert not first.usage_metadata.cached_content_token_count, first.usage_metadata
    chunks = list(
        client.models.generate_content_stream(model="gemini-2.5-flash", contents="one?", config=config)
    )
    meta = chunks[-1].usage_metadata
    assert meta.cached_content_token_count >= 1024, meta
    assert meta.cached_content_token_count <= meta.prompt_token_count, meta
    again = client.models.generate_content(model="gemini-2.5-flash", contents="one?", config=config)
    assert again.usage_metadata.cached_content_token_count == meta.cached_content_token_count


def check_bedrock():
    br = boto3.client(
        "bedrock-runtime",
        endpoint_url=base,
        region_name="us-east-1",
        aws_access_key_id="AKIDCACHE",
        aws_secret_access_key="not-checked",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    kwargs = dict(
        modelId="anthropic.claude-sonnet-4-20250514-v1:0",
        system=[{"text": system}, {"cachePoint": {"type": "default"}}],
        messages=[{"role": "user", "content": [{"text": "one?"}]}],
    )
    first = br.converse(**kwargs)["usage"]
    assert first["cacheReadInputTokens"] == 0 and first["cacheWriteInputTokens"] >= 1024, first
    events = list(br.converse_stream(**kwargs)["stream"])
    usage = next(e["metadata"]["usage"] for e in events if "metadata" in e)
    assert usage["cacheReadInputTokens"] == first["cacheWriteInputTokens"], usage
    assert usage["cacheWriteInputTokens"] == 0, usage
    parts = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
    assert usage["totalTokens"] == sum(usage[k] for k in parts), usage


check_openai()
check_anthropic()
check_gemini()
check_bedrock()
print("prompt cache sdks: ok")
