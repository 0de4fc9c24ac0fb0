#!/usr/bin/env bash
# Benchmarks of mock-upstream, on loopback, in three parts:
# 1. Throughput: nginx returning the mock's own pre-encoded completion, the smallest hyper server
#    returning the same bytes (the ceiling for anything built on hyper), and the mock, under the
#    same wrk load, interleaved. The server is pinned to CPU 0 (one worker), wrk to CPU 1 (one
#    thread, 64 connections). Prints requests/s per round and the median ratios to nginx.
# 2. Allocations per request (cargo bench --bench alloc), against the hyper hello world.
# 3. Idle RSS, and RSS with 10,000 streams open (their first token held back by a long TTFT).
#
# Usage: scripts/bench-mock.sh [ROUNDS] [SECONDS]      (defaults: 3 rounds of 10 s)
# Needs: wrk, nginx, curl (apt-get install wrk nginx curl), python3.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
mock_bin="$root/target/release/mock-upstream"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

for tool in wrk nginx curl taskset; do
  command -v "$tool" >/dev/null || { echo "bench-mock: $tool not found (apt-get install wrk nginx curl)" >&2; exit 2; }
done
(cd "$root" && cargo build --release -q -p mock-upstream --bin mock-upstream --example hyper_hello)
hello_bin="$root/target/release/examples/hyper_hello"

mock_port=18431
nginx_port=18432
hello_port=18433
request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'
stream_request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16,"stream":true}'

wait_port() {
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0
    sleep 0.05
  done
  echo "bench-mock: nothing listening on port $1" >&2
  exit 2
}

start_mock() {
  taskset -c 0 "$mock_bin" --listen "127.0.0.1:$mock_port" --threads 1 2>"$work/mock.log" &
  mock_pid=$!
  wait_port "$mock_port"
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# The body nginx returns is the mock's own response to the benchmark request.
start_mock
curl -s "http://127.0.0.1:$mock_port/v1/chat/completions" -d "$request" >"$work/body.json"
stop "$mock_pid"
grep -q "chat.completion" "$work/body.json" || { echo "bench-mock: mock gave no completion" >&2; exit 2; }

. "$root/scripts/lib/nginx.sh"
write_nginx_conf "$work" "$nginx_port" "$work/body.json"

start_nginx() {
  taskset -c 0 nginx -c "$work/nginx.conf" -p "$work/nginx" &
  nginx_pid=$!
  wait_port "$nginx_port"
}

start_hello() {
  taskset -c 0 "$hello_bin" "127.0.0.1:$hello_port" "$work/body.json" 2>/dev/null &
  hello_pid=$!
  wait_port "$hello_port"
}

cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$request'
wrk.headers["Content-Type"] = "application/json"
LUA
cat >"$work/stream.lua" <<LUA
wrk.method = "POST"
wrk.body = '$stream_request'
wrk.headers["Content-Type"] = "application/json"
LUA

load() { # port script -> requests/s
  taskset -c 1 wrk -t1 -c64 -d"${seconds}s" -s "$2" "http://127.0.0.1:$1/v1/chat/completions" >"$work/wrk.out"
  if grep -q "Non-2xx" "$work/wrk.out"; then
    cat "$work/wrk.out" >&2; echo "bench-mock: errors in the run" >&2; exit 1
  fi
  awk '/Requests\/sec/ {print $2}' "$work/wrk.out"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}'), nginx $(nginx -v 2>&1 | cut -d/ -f2); server on CPU 0, wrk -t1 -c64 -d${seconds}s on CPU 1"
echo "response: $(wc -c <"$work/body.json") bytes of completion JSON"
echo
echo "## Throughput (requests/s, non-streaming chat completion)"
printf "%-6s %12s %12s %12s %9s %9s %14s\n" round nginx "hyper hello" mock "hello/ng" "mock/ng" "mock streams/s"
mock_ratios=(); hello_ratios=()
for round in $(seq "$rounds"); do
  start_nginx; n=$(load "$nginx_port" "$work/post.lua"); stop "$nginx_pid"
  start_hello; h=$(load "$hello_port" "$work/post.lua"); stop "$hello_pid"
  start_mock; m=$(load "$mock_port" "$work/post.lua"); s=$(load "$mock_port" "$work/stream.lua"); stop "$mock_pid"
  rm=$(awk -v a="$m" -v b="$n" 'BEGIN {printf "%.3f", a / b}')
  rh=$(awk -v a="$h" -v b="$n" 'BEGIN {printf "%.3f", a / b}')
  mock_ratios+=("$rm"); hello_ratios+=("$rh")
  printf "%-6s %12s %12s %12s %9s %9s %14s\n" "$round" "$n" "$h" "$m" "$rh" "$rm" "$s"
done
median() { printf "%s\n" "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median ratio to nginx: hyper hello $(median "${hello_ratios[@]}"), mock $(median "${mock_ratios[@]}")"

echo
echo "## Allocations per request"
(cd "$root" && cargo bench -q -p mock-upstream --bench alloc 2>/dev/null)

echo
echo "## Memory (VmRSS of the mock, one worker thread)"
taskset -c 0 "$mock_bin" --listen "127.0.0.1:$mock_port" --threads 1 --ttft 300s 2>"$work/mock.log" &
mock_pid=$!
wait_port "$mock_port"
echo "idle: $(awk '/VmRSS/ {print $2, $3}' /proc/$mock_pid/status)"
python3 "$root/scripts/lib/open_streams.py" "127.0.0.1:$mock_port" 10000 "$mock_pid" | sed 's/^/with streams: /'
stop "$mock_pid"
