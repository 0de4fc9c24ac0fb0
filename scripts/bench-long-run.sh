#!/usr/bin/env bash
# Does a long open-loop run measure what a short one does? loadgen at 5,000 req/s with its
# default pacer against nginx (one worker on CPU 1, `return 200` of the mock's own completion),
# loadgen on CPU 0, for SECONDS; prints the per-second p50 of response time in 30 s steps, the
# first and last 30 s (or minute, for runs of 2 minutes or more) and their ratio, and loadgen's
# own schedule lag, connection wait and CPU. A drift between the clock deadlines are armed on and
# the clock they are read on shows as a p50 that grows over the run.
#
# Usage: scripts/bench-long-run.sh [SECONDS] [LOADGEN_BINARY ...]   (default 300 s, this build)
# Several binaries run one after the other (A/B across builds).
# Needs: nginx, curl (apt-get install nginx curl), python3.
set -euo pipefail

seconds=${1:-300}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib/build.sh"
if [ $# -eq 0 ]; then
  build_release -p loadgen --bin loadgen -p mock-upstream --bin mock-upstream
  set -- "$root/target/release/loadgen"
else
  build_release -p mock-upstream --bin mock-upstream
fi
. "$root/scripts/lib/tools.sh"
require_tool bench-long-run nginx curl taskset python3
mock_port=18461
nginx_port=18462
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. "$root/scripts/lib/ports.sh"
require_free_ports bench-long-run "$mock_port" "$nginx_port"

# nginx answers with the mock's own completion, which loadgen checks like any other.
"$root/target/release/mock-upstream" --listen "127.0.0.1:$mock_port" --threads 1 >/dev/null 2>&1 &
mock_pid=$!
wait_answers "http://127.0.0.1:$mock_port/health" || { echo "bench-long-run: the mock did not start" >&2; exit 2; }
curl -s "http://127.0.0.1:$mock_port/v1/chat/completions" \
  -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}' >"$work/body.json"
kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true
. "$root/scripts/lib/nginx.sh"
write_nginx_conf "$work" "$nginx_port" "$work/body.json"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "loadgen run --rate 5000 --duration ${seconds}s --pin 0 (default pacer); nginx $(nginx -v 2>&1 | cut -d/ -f2), one worker on CPU 1"
for loadgen in "$@"; do
  taskset -c 1 nginx -c "$work/nginx.conf" -p "$work/nginx" &
  nginx_pid=$!
  wait_answers "http://127.0.0.1:$nginx_port/" || { echo "bench-long-run: nginx did not start" >&2; exit 2; }
  # --pin, --cores's former name: builds from before the rename take it too (A/B across builds).
  taskset -c 0 "$loadgen" run --target "http://127.0.0.1:$nginx_port/v1/chat/completions" \
    --rate 5000 --duration "${seconds}s" --pin 0 --out "$work/run.json" >"$work/run.txt" 2>&1 || true
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
  echo
  echo "## $loadgen"
  python3 - "$work/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
p50 = [s["response_time_p50_us"] for s in run["timeline"]]
median = lambda xs: sorted(xs)[len(xs) // 2]
steps = [median(p50[i:i + 30]) for i in range(0, len(p50), 30)]
print("per-second p50 in 30 s steps (µs):", ", ".join(map(str, steps)))
edge = 60 if len(p50) >= 120 else 30
first, last = median(p50[:edge]), median(p50[-edge:])
print(f"first {edge} s {first} µs, last {edge} s {last} µs, last / first {last / first:.2f}")
PY
  grep -E "schedule_lag|connection_wait|send_delay|generator CPU|verdict" "$work/run.txt" | sed 's/^ *//'
done
