#!/usr/bin/env bash
# Two builds of mock-upstream side by side: the same wrk load on each, interleaved round by
# round (A, B, A, B ...), for the non-streaming chat completion and the 16-token stream. Each
# server runs one worker pinned to CPU 0; wrk runs on CPU 1 (one thread, 64 connections).
# Prints requests/s per round and the median ratio B/A of each: what a change cost. Then the
# timing precision of each build (scripts/lib/mock_precision.sh: --latency 3ms paired against
# 0 ms, the emission error of 1,000 and of 500 streams), A then B.
#
# Usage: scripts/bench-mock-ab.sh A_BINARY B_BINARY [ROUNDS] [SECONDS]   (defaults 5 rounds of 8 s)
# Build A from an older commit with, e.g.:
#   git worktree add /tmp/base COMMIT && CARGO_TARGET_DIR=/tmp/base-target \
#     cargo build --release -p mock-upstream --manifest-path /tmp/base/Cargo.toml
# Needs: wrk, curl (apt-get install wrk curl), oha (cargo install oha --locked), python3.
set -euo pipefail

a_bin=${1:?usage: bench-mock-ab.sh A_BINARY B_BINARY [ROUNDS] [SECONDS]}
b_bin=${2:?usage: bench-mock-ab.sh A_BINARY B_BINARY [ROUNDS] [SECONDS]}
rounds=${3:-5}
seconds=${4:-8}
port=18441
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/lib/tools.sh"
require_tool bench-mock-ab wrk curl taskset oha python3
. "$root/scripts/lib/ports.sh"
. "$root/scripts/lib/stats.sh"

request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}'
stream_request='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16,"stream":true}'
for name in post stream; do
  body=$request
  [ "$name" = stream ] && body=$stream_request
  printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
    "'$body'" >"$work/$name.lua"
done

start() { # binary
  taskset -c 0 "$1" --listen "127.0.0.1:$port" --threads 1 2>/dev/null &
  pid=$!
  wait_answers "http://127.0.0.1:$port/health" && return 0
  echo "bench-mock-ab: $1 did not start" >&2
  exit 2
}
stop() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
load() { # script -> requests/s
  taskset -c 1 wrk -t1 -c64 -d"${seconds}s" -s "$work/$1.lua" "http://127.0.0.1:$port/v1/chat/completions" >"$work/wrk.out"
  if grep -q "Non-2xx\|Socket errors" "$work/wrk.out"; then
    cat "$work/wrk.out" >&2; echo "bench-mock-ab: errors in the run" >&2; exit 1
  fi
  awk '/Requests\/sec/ {print $2}' "$work/wrk.out"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r)"
echo "A: $a_bin"
echo "B: $b_bin"
echo "server on CPU 0 (one worker), wrk -t1 -c64 -d${seconds}s on CPU 1"
printf "%-6s %12s %12s %8s %12s %12s %8s\n" round "A chat/s" "B chat/s" "B/A" "A stream/s" "B stream/s" "B/A"
chat=(); streams=()
for round in $(seq "$rounds"); do
  # Alternate which build goes first, so a drift of the machine does not favour one.
  if [ $((round % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
  for which in $order; do
    bin=$a_bin; [ "$which" = b ] && bin=$b_bin
    start "$bin"
    c=$(load post); s=$(load stream)
    stop
    eval "${which}_chat=$c ${which}_stream=$s"
  done
  rc=$(awk -v a="$a_chat" -v b="$b_chat" 'BEGIN {printf "%.3f", b / a}')
  rs=$(awk -v a="$a_stream" -v b="$b_stream" 'BEGIN {printf "%.3f", b / a}')
  chat+=("$rc"); streams+=("$rs")
  printf "%-6s %12s %12s %8s %12s %12s %8s\n" "$round" "$a_chat" "$b_chat" "$rc" "$a_stream" "$b_stream" "$rs"
done
echo "median B/A: chat $(median "${chat[@]}"), streams $(median "${streams[@]}")"

. "$root/scripts/lib/build.sh"
build_release -p loadgen --bin loadgen
. "$root/scripts/lib/mock_precision.sh"
for which in a b; do
  bin=$a_bin; [ "$which" = b ] && bin=$b_bin
  echo
  echo "## Timing precision, $(echo "$which" | tr ab AB)"
  mock_precision "$bin" "$root/target/release/loadgen" "$port" $((port + 1)) "$seconds" "$work"
done
