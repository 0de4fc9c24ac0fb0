#!/usr/bin/env bash
# Throughput of mock-upstream against nginx serving the same pre-encoded body, under the same
# wrk load, interleaved, on loopback. The server under test is pinned to CPU 0 (one worker),
# wrk to CPU 1 (one thread, 64 connections). Prints requests/s per round and the median ratio.
#
# Usage: scripts/bench-mock.sh [ROUNDS] [SECONDS]      (defaults: 3 rounds of 10 s)
# Needs: wrk and nginx (apt-get install wrk nginx), a release build of mock-upstream.
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
[ -x "$mock_bin" ] || (cd "$root" && cargo build --release -q -p mock-upstream)

mock_port=18431
nginx_port=18432
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

mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path $work/nginx;
  proxy_temp_path $work/nginx;
  fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx;
  scgi_temp_path $work/nginx;
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      default_type application/json;
      return 200 '$(cat "$work/body.json")';
    }
  }
}
NGINX

start_nginx() {
  taskset -c 0 nginx -c "$work/nginx.conf" -p "$work/nginx" &
  nginx_pid=$!
  wait_port "$nginx_port"
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
printf "%-6s %14s %14s %8s %16s\n" round "nginx req/s" "mock req/s" ratio "mock stream/s"
ratios=()
for round in $(seq "$rounds"); do
  start_nginx; n=$(load "$nginx_port" "$work/post.lua"); stop "$nginx_pid"
  start_mock; m=$(load "$mock_port" "$work/post.lua"); s=$(load "$mock_port" "$work/stream.lua"); stop "$mock_pid"
  r=$(awk -v m="$m" -v n="$n" 'BEGIN {printf "%.3f", m / n}')
  ratios+=("$r")
  printf "%-6s %14s %14s %8s %16s\n" "$round" "$n" "$m" "$r" "$s"
done
median=$(printf "%s\n" "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "median ratio mock/nginx: $median"
