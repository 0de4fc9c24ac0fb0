"""Opens N streaming chat requests to a mock and holds them open, for an RSS measurement.

Usage: python3 open_streams.py HOST:PORT N PID
Connects N sockets, sends a streaming request on each, waits until every response head has
arrived (the mock sends headers at once and the first token only after its TTFT), prints the
mock's RSS (VmRSS of PID, in KiB) with N streams open, then closes everything.
"""

import selectors
import socket
import sys
import time

host, port = sys.argv[1].rsplit(":", 1)
n = int(sys.argv[2])
pid = sys.argv[3]

body = b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}'
request = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\n"
    + b"content-length: %d\r\n\r\n" % len(body)
    + body
)


def rss_kib():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


socks = []
sel = selectors.DefaultSelector()
for _ in range(n):
    s = socket.create_connection((host, int(port)))
    s.sendall(request)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
    socks.append(s)

heads = 0
deadline = time.time() + 60
while heads < n and time.time() < deadline:
    for key, _ in sel.select(timeout=1):
        data = key.fileobj.recv(65536)
        if not data:
            raise SystemExit("mock closed a stream")
        if b"\r\n\r\n" in data:
            heads += 1
            sel.unregister(key.fileobj)
if heads < n:
    raise SystemExit(f"only {heads} of {n} streams started")
time.sleep(1)
print(f"open_streams={n} rss_kib={rss_kib()}")
for s in socks:
    s.close()
