"""Opens N streaming chat requests to a mock and holds them open, for an RSS measurement.

Usage: python3 open_streams.py HOST:PORT N PID [HOLD_SECONDS]
Connects N sockets, sends a streaming request on each, waits until every response head has
arrived (the mock sends headers at once and the first token only after its TTFT), prints the
mock's RSS (VmRSS of PID, in KiB) with N streams open and, over HOLD_SECONDS (default 5) with
every stream waiting, the CPU the mock used as a share of one core; then closes everything.
"""

import os
import selectors
import socket
import sys
import time

host, port = sys.argv[1].rsplit(":", 1)
n = int(sys.argv[2])
pid = sys.argv[3]
hold = float(sys.argv[4]) if len(sys.argv) > 4 else 5.0

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


def cpu_seconds():
    """User plus system time of PID, all threads."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
before = cpu_seconds()
time.sleep(hold)
idle_cpu = (cpu_seconds() - before) / hold
print(f"open_streams={n} rss_kib={rss_kib()} idle_cpu_core_share={idle_cpu:.4f} over {hold:g} s")
for s in socks:
    s.close()
