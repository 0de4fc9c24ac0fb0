// The official `openai` npm package reading the mock's chat stream, and its errors.
// Usage: node openai_stream.mjs BASE_URL   (BASE_URL like http://127.0.0.1:PORT/v1)
import assert from "node:assert/strict";
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.argv[2], apiKey: "sk-test", maxRetries: 0 });

const stream = await client.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "hi" }],
  max_tokens: 4,
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let finish = null;
let usage = null;
for await (const chunk of stream) {
  if (chunk.choices.length > 0) {
    text += chunk.choices[0].delta.content ?? "";
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  usage = chunk.usage ?? usage;
}
assert.equal(text, "Hello from the gatebench");
assert.equal(finish, "length");
assert.equal(usage.completion_tokens, 4);

// The in-stream error becomes the SDK's own error.
const broken = await client.chat.completions.create(
  { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: true },
  { headers: { "x-mock-fault": "error@3" } },
);
await assert.rejects(async () => {
  for await (const _ of broken) {
    // read until the error
  }
}, OpenAI.APIError);

// A forced 429 is a RateLimitError with the provider's status.
await assert.rejects(
  client.chat.completions.create(
    { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], stream: true },
    { headers: { "x-mock-status": "429" } },
  ),
  (err) => err instanceof OpenAI.RateLimitError && err.status === 429,
);
console.log("openai npm: ok");
