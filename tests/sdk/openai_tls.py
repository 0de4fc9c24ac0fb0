"""The OpenAI SDK over TLS to the mock, trusting only the CA file the mock wrote.

Usage: openai_tls.py BASE_URL CA_FILE   (BASE_URL like https://localhost:PORT/v1)
"""

import sys

import openai

base, ca_file = sys.argv[1], sys.argv[2]
client = openai.OpenAI(
    base_url=base, api_key="sk-test", max_retries=0, http_client=openai.DefaultHttpxClient(verify=ca_file)
)
r = client.chat.completions.create(
    model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], max_tokens=3
)
assert r.choices[0].message.content == "Hello from the", r
text = "".join(
    c.choices[0].delta.content or ""
    for c in client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], max_tokens=3,
        stream=True,
    )
    if c.choices
)
assert text == "Hello from the", text
# Without the CA the connection is refused: the certificate really is checked.
strict = openai.OpenAI(base_url=base, api_key="sk-test", max_retries=0)
try:
    strict.models.list()
    raise SystemExit("an untrusted certificate was accepted")
except openai.APIConnectionError:
    pass
print("openai tls: ok")
