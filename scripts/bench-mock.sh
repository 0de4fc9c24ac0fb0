#!/usr/bin/env bash
# Benchmarks of mock-upstream, on loopback, in four parts:
# 1. Throughput: nginx returning the mock's own pre-encoded completion, the smallest hyper server
#    returning the same bytes (the ceiling for anything built on hyper), and the mock, under the
#    same wrk load, interleaved; then 16-token streams, the mock against nginx serving the
#    mock's own stream bytes as a static file (to GET: nginx serves no file to POST). The server is pinned to CPU 0 (one worker), wrk to CPU 1 (one
#    thread, 64 connections). Prints requests/s per round and the median ratios to nginx.
# 2. Allocations per request (the alloc test, which asserts them), against the hyper hello world.
# 3. Memory and idle CPU: RSS idle, and RSS and CPU with 1,000 and 10,000 streams open and
#    waiting (their first token held back by a long TTFT).
# 4. Timing precision: the machine's own timerfd wake-up lateness; a --latency 3ms mock paired
#    against a 0 ms mock by loadgen overhead; the mock's emission error with 1,000 streams x 60
#    tokens at 20 ms (oha, which also gives slowest / one stream, and the mock's CPU) and with 500
#    streams at ttft 50 ms, itl 10 ms (wrk).
#
# Usage: scripts/bench-mock.sh [ROUNDS] [SECONDS] [PARTS]
#   defaults: 3 rounds of 10 s, every part; PARTS is a comma-separated subset of
#   throughput,alloc,memory,precision.
# Needs: wrk, nginx, curl (apt-get install wrk nginx curl), oha (cargo install oha --locked),
# python3.
set -euo pipefail

rounds=${1:-3}
seconds=${2:-10}
parts=${3:-throughput,alloc,memory,precision}
part() { [[ ",$parts," == *",$1,"* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
mock_bin="$root/target/release/mock-upstream"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

. "$root/scripts/lib/tools.sh"
require_tool bench-mock wrk nginx curl taskset oha
. "$root/scripts/lib/build.sh"
build_release -p mock-upstream --bin mock-upstream --example hyper_hello
build_release -p loadgen --bin loadgen
build_release -p gatebench-shared --example timer_floor
hello_bin="$root/target/release/examples/hyper_hello"
loadgen_bin="$root/target/release/loadgen"

mock_port=18431
nginx_port=18432
hello_port=18433
request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'
stream_request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16,"stream":true}'
# No max_tokens: as long as the mock's --tokens.
long_stream_request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"stream":true}'

. "$root/scripts/lib/ports.sh"
. "$root/scripts/lib/stats.sh"
require_free_ports bench-mock "$mock_port" "$nginx_port" "$hello_port"

wait_port() {
  wait_answers "http://127.0.0.1:$1/" && return 0
  echo "bench-mock: nothing listening on port $1" >&2
  exit 2
}

start_mock() { # [mock flags...]
  taskset -c 0 "$mock_bin" --listen "127.0.0.1:$mock_port" --threads 1 "$@" 2>"$work/mock.log" &
  mock_pid=$!
  wait_port "$mock_port"
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# The body nginx returns is the mock's own response to the benchmark request.
start_mock
curl -s "http://127.0.0.1:$mock_port/v1/chat/completions" -d "$request" >"$work/body.json"
curl -s "http://127.0.0.1:$mock_port/v1/chat/completions" -d "$stream_request" >"$work/stream.sse"
stop "$mock_pid"
grep -q "chat.completion" "$work/body.json" || { echo "bench-mock: mock gave no completion" >&2; exit 2; }
grep -q "data: \[DONE\]" "$work/stream.sse" || { echo "bench-mock: mock gave no stream" >&2; exit 2; }

. "$root/scripts/lib/nginx.sh"
# nginx's worker (an unprivileged user when started as root) must be able to read the file.
chmod a+rx "$work"; chmod a+r "$work/stream.sse"
write_nginx_conf "$work" "$nginx_port" "$work/body.json" "$work/stream.sse"

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
cat >"$work/long-stream.lua" <<LUA
wrk.method = "POST"
wrk.body = '$long_stream_request'
wrk.headers["Content-Type"] = "application/json"
LUA

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system, in clock ticks

load() { # port script|GET [path] [server pid] -> requests/s; the server's CPU µs per request in $work/cpu
  local script=(-s "$2"); [ "$2" = GET ] && script=()
  local before=0; [ -n "${4:-}" ] && before=$(cpu_ticks "$4")
  taskset -c 1 wrk -t1 -c64 -d"${seconds}s" "${script[@]}" "http://127.0.0.1:$1${3:-/v1/chat/completions}" >"$work/wrk.out"
  if grep -q "Non-2xx" "$work/wrk.out"; then
    cat "$work/wrk.out" >&2; echo "bench-mock: errors in the run" >&2; exit 1
  fi
  if [ -n "${4:-}" ]; then
    awk -v t=$(( $(cpu_ticks "$4") - before )) -v hz="$(getconf CLK_TCK)" \
      '/requests in/ {printf "%.2f", t * 1e6 / hz / $1}' "$work/wrk.out" >"$work/cpu"
  fi
  awk '/Requests\/sec/ {print $2}' "$work/wrk.out"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}'), nginx $(nginx -v 2>&1 | cut -d/ -f2); server on CPU 0, wrk -t1 -c64 -d${seconds}s on CPU 1"
echo "response: $(wc -c <"$work/body.json") bytes of completion JSON"
if part throughput; then
echo
echo "## Throughput (requests/s, non-streaming chat completion)"
echo "stream: $(wc -c <"$work/stream.sse") bytes of 16-token SSE (nginx serves the same bytes as a static file, to GET)"
echo "CPU: the server's user + system time per request (µs), from /proc over the same run"
printf "%-6s %10s %10s %10s %8s %8s %12s %12s %8s %8s %8s %8s\n" round nginx "hyper hello" mock "hello/ng" "mock/ng" "ng stream/s" "mock stream/s" "st m/ng" "ng cpu" "hel cpu" "mock cpu"
mock_ratios=(); hello_ratios=(); stream_ratios=(); cpu_ratios=()
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
for round in $(seq "$rounds"); do
  start_nginx; worker=$(pgrep -P "$nginx_pid" | head -1)
  n=$(load "$nginx_port" "$work/post.lua" "" "$worker"); nc=$(cat "$work/cpu"); ns=$(load "$nginx_port" GET /stream); stop "$nginx_pid"
  start_hello; h=$(load "$hello_port" "$work/post.lua" "" "$hello_pid"); hc=$(cat "$work/cpu"); stop "$hello_pid"
  start_mock; m=$(load "$mock_port" "$work/post.lua" "" "$mock_pid"); mc=$(cat "$work/cpu"); s=$(load "$mock_port" "$work/stream.lua"); stop "$mock_pid"
  rm=$(ratio "$m" "$n"); rh=$(ratio "$h" "$n"); rs=$(ratio "$s" "$ns")
  mock_ratios+=("$rm"); hello_ratios+=("$rh"); stream_ratios+=("$rs"); cpu_ratios+=("$(ratio "$nc" "$mc")")
  printf "%-6s %10s %10s %10s %8s %8s %12s %12s %8s %8s %8s %8s\n" "$round" "$n" "$h" "$m" "$rh" "$rm" "$ns" "$s" "$rs" "$nc" "$hc" "$mc"
done
echo "median ratio to nginx: hyper hello $(median "${hello_ratios[@]}"), mock $(median "${mock_ratios[@]}"), mock 16-token streams $(median "${stream_ratios[@]}"); nginx CPU / mock CPU per chat request $(median "${cpu_ratios[@]}")"
fi

if part alloc; then
echo
echo "## Allocations per request"
(cd "$root" && cargo test -q --release -p mock-upstream --test alloc -- --nocapture 2>/dev/null | grep -v '^$\|^running\|^test \|^\.$')
fi

if part memory; then
echo
echo "## Memory and idle CPU (the mock, one worker thread; streams held before their first token)"
for streams in 1000 10000; do
  start_mock --ttft 300s
  [ "$streams" = 1000 ] && echo "idle: $(awk '/VmRSS/ {print $2, $3}' /proc/$mock_pid/status)"
  python3 "$root/scripts/lib/open_streams.py" "127.0.0.1:$mock_port" "$streams" "$mock_pid" 5
  stop "$mock_pid"
done
fi

if part precision; then
echo
echo "## Timing precision"
"$root/target/release/examples/timer_floor"
. "$root/scripts/lib/mock_precision.sh"
mock_precision "$mock_bin" "$loadgen_bin" "$mock_port" "$hello_port" "$seconds" "$work"
fi
